//! A tiny PTX interpreter for tests: runs one launch (all CTAs of a grid,
//! several threads each) of an entry from the AST, interleaving threads
//! round-robin with a seeded quantum or, adversarially, one randomly chosen
//! thread per instruction (`Launch::adversarial`). A thread at `bar.sync` /
//! `barrier.sync` / `barrier.red.popc` is parked until every non-exited
//! thread of its CTA has arrived (as the hardware does); `barrier.red.popc`
//! then gives every participant the count of arrivals that voted true, and
//! a round that mixes `barrier.red` with `barrier.sync` is an error (the
//! PTX ISA leaves it undefined). It covers the integer subset the
//! transforms emit and the hand-written test kernels use; anything else is
//! an error, not a guess. Test support only.

#![allow(dead_code)]

use std::collections::HashMap;

use tally_kernels::ptx::ast::*;
use tally_kernels::ptx::lexer::int_value;

use super::memory::{read_le, write_le, Launch, Memory};
use super::program::{flatten, Program};
use super::threads::{release_barrier, Arrival, Cta, State, Thread};
use super::values::{sext, trunc, type_bytes, types, width};

struct Machine<'a> {
    prog: Program<'a>,
    launch: &'a Launch,
    func: &'a Function,
}

impl Machine<'_> {
    fn special(&self, t: &Thread, ctas: &[Cta], name: &str, comp: Option<&str>) -> Option<u64> {
        let k = match comp {
            Some("x") => 0,
            Some("y") => 1,
            Some("z") => 2,
            _ => return None,
        };
        let v = match name {
            "%tid" => t.tid[k],
            "%ntid" => self.launch.block[k],
            "%ctaid" => ctas[t.cta].ctaid[k],
            "%nctaid" => self.launch.grid[k],
            _ => return None,
        };
        Some(u64::from(v))
    }

    fn value(&self, t: &Thread, ctas: &[Cta], op: &Operand, w: u32) -> Result<u64, String> {
        match op {
            Operand::Var { name, comp } => {
                if let Some(v) = self.special(t, ctas, name, comp.as_deref()) {
                    return Ok(v);
                }
                if comp.is_some() {
                    return Err(format!("unsupported special register {name}"));
                }
                if let Some(v) = t.regs.get(name.as_str()) {
                    return Ok(trunc(*v, w));
                }
                if let Some(a) = self.prog.shared_syms.get(name.as_str()) {
                    return Ok(*a);
                }
                Err(format!("read of unset register or unknown symbol {name}"))
            }
            Operand::Imm {
                text,
                negative,
                float: false,
            } => {
                let v = int_value(text).ok_or("bad literal")?;
                Ok(trunc(if *negative { v.wrapping_neg() } else { v }, w))
            }
            other => Err(format!("unsupported operand {other}")),
        }
    }

    fn dst(i: &Instruction, k: usize) -> Result<Option<&str>, String> {
        match i.operands.get(k) {
            Some(Operand::Var { name, comp: None }) => Ok(Some(name)),
            Some(Operand::Sink) => Ok(None),
            other => Err(format!("bad destination {other:?} in {i}")),
        }
    }

    /// Resolves an address operand to (space-relative) address.
    fn address(&self, t: &Thread, ctas: &[Cta], op: &Operand) -> Result<(String, u64), String> {
        let Operand::Addr { base, offset } = op else {
            return Err(format!("expected an address, got {op}"));
        };
        let b = match base {
            AddrBase::Imm(s) => int_value(s).ok_or("bad address")?,
            AddrBase::Var(name) => {
                if let Some(v) = t.regs.get(name.as_str()) {
                    *v
                } else if let Some(a) = self.prog.shared_syms.get(name.as_str()) {
                    *a
                } else {
                    return Ok((name.clone(), *offset as u64));
                }
            }
        };
        let _ = ctas;
        Ok((String::new(), b.wrapping_add(*offset as u64)))
    }

    fn load(
        &self,
        t: &Thread,
        ctas: &[Cta],
        mem: &Memory,
        space: &str,
        op: &Operand,
        n: usize,
    ) -> Result<u64, String> {
        let (sym, addr) = self.address(t, ctas, op)?;
        match space {
            "param" => {
                if addr != 0 {
                    return Err("param offsets unsupported".into());
                }
                self.launch
                    .params
                    .get(&sym)
                    .copied()
                    .ok_or_else(|| format!("no value for parameter {sym}"))
            }
            "global" => mem.read(addr, n),
            "shared" => {
                let sh = &ctas[t.cta].shared;
                let a = usize::try_from(addr).map_err(|_| "bad shared address")?;
                sh.get(a..a + n)
                    .map(read_le)
                    .ok_or_else(|| format!("shared access {a} out of bounds"))
            }
            s => Err(format!("unsupported load space {s}")),
        }
    }

    // The memory spaces and the value's width all travel separately here.
    #[allow(clippy::too_many_arguments)]
    fn store(
        &self,
        t: &Thread,
        ctas: &mut [Cta],
        mem: &mut Memory,
        space: &str,
        op: &Operand,
        n: usize,
        v: u64,
    ) -> Result<(), String> {
        let (sym, addr) = self.address(t, ctas, op)?;
        if !sym.is_empty() {
            return Err(format!("store to unknown symbol {sym}"));
        }
        match space {
            "global" => mem.write(addr, n, v),
            "shared" => {
                let sh = &mut ctas[t.cta].shared;
                let a = usize::try_from(addr).map_err(|_| "bad shared address")?;
                let slot = sh
                    .get_mut(a..a + n)
                    .ok_or_else(|| format!("shared access {a} out of bounds"))?;
                write_le(slot, v);
                Ok(())
            }
            s => Err(format!("unsupported store space {s}")),
        }
    }

    /// Executes the instruction at the thread's pc.
    fn step(&self, t: &mut Thread, ctas: &mut [Cta], mem: &mut Memory) -> Result<(), String> {
        let Some(i) = self.prog.code.get(t.pc).copied() else {
            t.state = State::Exited;
            return Ok(());
        };
        t.pc += 1;
        if let Some(g) = &i.guard {
            let p = *t
                .regs
                .get(g.pred.as_str())
                .ok_or_else(|| format!("unset predicate {}", g.pred))?;
            if (p != 0) == g.negated {
                return Ok(());
            }
        }
        let tys = types(i);
        let ty = tys.last().copied().unwrap_or("b32");
        let w = width(ty);
        let signed = ty.starts_with('s');
        let ops = &i.operands;
        macro_rules! val {
            ($k:expr, $w:expr) => {{
                let op = ops
                    .get($k)
                    .ok_or_else(|| format!("missing operand {} in {i}", $k))?;
                self.value(t, ctas, op, $w)?
            }};
        }
        let set = |t: &mut Thread, k: usize, v: u64, w: u32| -> Result<(), String> {
            if let Some(d) = Self::dst(i, k)? {
                t.regs.insert(d.to_string(), trunc(v, w));
            }
            Ok(())
        };
        let space = i
            .modifiers
            .iter()
            .find(|m| {
                matches!(
                    m.as_str(),
                    "param" | "global" | "shared" | "local" | "const"
                )
            })
            .map_or("generic", String::as_str);
        match i.opcode.as_str() {
            "mov" => {
                let v = val!(1, w);
                set(t, 0, v, w)?;
            }
            "add" | "sub" | "and" | "or" | "xor" | "shl" | "shr" | "div" | "rem" | "min"
            | "max" | "mul" => {
                let a = val!(1, w);
                let b = val!(
                    2,
                    if i.opcode == "shl" || i.opcode == "shr" {
                        32
                    } else {
                        w
                    }
                );
                if i.opcode == "mul" && i.has_modifier("wide") {
                    let r = if signed {
                        (sext(a, w).wrapping_mul(sext(b, w))) as u64
                    } else {
                        a.wrapping_mul(b)
                    };
                    return set(t, 0, r, 2 * w);
                }
                if i.opcode == "mul" && i.has_modifier("hi") {
                    return Err("mul.hi unsupported".into());
                }
                let (sa, sb) = (sext(a, w), sext(b, w));
                let r = match i.opcode.as_str() {
                    "add" => a.wrapping_add(b),
                    "sub" => a.wrapping_sub(b),
                    "mul" => a.wrapping_mul(b),
                    "and" => a & b,
                    "or" => a | b,
                    "xor" => a ^ b,
                    "shl" => {
                        if b >= u64::from(w) {
                            0
                        } else {
                            a << b
                        }
                    }
                    "shr" if signed => (sa >> b.min(63)) as u64,
                    "shr" => {
                        if b >= u64::from(w) {
                            0
                        } else {
                            a >> b
                        }
                    }
                    "div" | "rem" => {
                        if b == 0 {
                            return Err(format!("division by zero in {i}"));
                        }
                        match (i.opcode.as_str(), signed) {
                            ("div", true) => sa.wrapping_div(sb) as u64,
                            ("div", false) => a / b,
                            ("rem", true) => sa.wrapping_rem(sb) as u64,
                            _ => a % b,
                        }
                    }
                    "min" if signed => sa.min(sb) as u64,
                    "min" => a.min(b),
                    "max" if signed => sa.max(sb) as u64,
                    _ => a.max(b),
                };
                set(t, 0, r, w)?;
            }
            "mad" => {
                if !i.has_modifier("lo") {
                    return Err("only mad.lo is supported".into());
                }
                let r = val!(1, w).wrapping_mul(val!(2, w)).wrapping_add(val!(3, w));
                set(t, 0, r, w)?;
            }
            "not" => {
                let v = !val!(1, w);
                set(t, 0, v, w)?;
            }
            "cvt" => {
                let (dt, st) = match tys.as_slice() {
                    [d, s] => (*d, *s),
                    _ => return Err(format!("cvt needs two integer types: {i}")),
                };
                let sw = width(st);
                let v = val!(1, sw);
                let v = if st.starts_with('s') {
                    sext(v, sw) as u64
                } else {
                    v
                };
                set(t, 0, v, width(dt))?;
            }
            "cvta" => {
                let v = val!(1, 64);
                set(t, 0, v, 64)?;
            }
            "setp" => {
                let a = val!(1, w);
                let b = val!(2, w);
                let (sa, sb) = (sext(a, w), sext(b, w));
                let cmp = i.modifiers.first().map(String::as_str).unwrap_or("");
                let r = match (cmp, signed) {
                    ("eq", _) => a == b,
                    ("ne", _) => a != b,
                    ("lt", true) => sa < sb,
                    ("le", true) => sa <= sb,
                    ("gt", true) => sa > sb,
                    ("ge", true) => sa >= sb,
                    ("lt" | "lo", false) => a < b,
                    ("le" | "ls", false) => a <= b,
                    ("gt" | "hi", false) => a > b,
                    ("ge" | "hs", false) => a >= b,
                    _ => return Err(format!("unsupported comparison in {i}")),
                };
                set(t, 0, u64::from(r), 1)?;
            }
            "selp" => {
                let p = val!(3, 1);
                let v = if p != 0 { val!(1, w) } else { val!(2, w) };
                set(t, 0, v, w)?;
            }
            "bra" => {
                let Some(Operand::Var { name, .. }) = ops.first() else {
                    return Err(format!("bad branch {i}"));
                };
                t.pc = *self
                    .prog
                    .labels
                    .get(name.as_str())
                    .ok_or_else(|| format!("unknown label {name}"))?;
            }
            "ld" => {
                let n = type_bytes(ty);
                let v = self.load(
                    t,
                    ctas,
                    mem,
                    space,
                    ops.get(1).ok_or("ld without address")?,
                    n,
                )?;
                set(t, 0, v, w)?;
            }
            "st" => {
                let n = type_bytes(ty);
                let v = val!(1, w);
                self.store(
                    t,
                    ctas,
                    mem,
                    space,
                    ops.first().ok_or("st without address")?,
                    n,
                    v,
                )?;
            }
            "atom" | "red" => {
                if !i.has_modifier("add") || ty != "u32" {
                    return Err(format!("only atom/red .add.u32 supported: {i}"));
                }
                let (addr_k, val_k) = if i.opcode == "atom" { (1, 2) } else { (0, 1) };
                let addr = ops.get(addr_k).ok_or("atom without address")?;
                let old = self.load(t, ctas, mem, space, addr, 4)?;
                let v = val!(val_k, 32);
                self.store(t, ctas, mem, space, addr, 4, trunc(old.wrapping_add(v), 32))?;
                if i.opcode == "atom" {
                    set(t, 0, old, 32)?;
                }
            }
            "bar" | "barrier" if i.has_modifier("warp") => {}
            "bar" | "barrier" if i.has_modifier("red") => {
                if !i.has_modifier("popc") {
                    return Err(format!("only barrier.red.popc is supported: {i}"));
                }
                let dst = Self::dst(i, 0)?.ok_or("barrier.red without a destination")?;
                let vote = match ops.last() {
                    Some(Operand::Not(p)) => {
                        *t.regs
                            .get(p.as_str())
                            .ok_or_else(|| format!("unset predicate {p}"))?
                            == 0
                    }
                    Some(Operand::Var { name, comp: None }) => {
                        *t.regs
                            .get(name.as_str())
                            .ok_or_else(|| format!("unset predicate {name}"))?
                            != 0
                    }
                    _ => return Err(format!("barrier.red without a predicate: {i}")),
                };
                t.arrival = Arrival::RedPopc {
                    vote,
                    dst: dst.to_string(),
                };
                t.state = State::AtBarrier;
            }
            "bar" | "barrier" => {
                t.arrival = Arrival::Sync;
                t.state = State::AtBarrier;
            }
            "ret" | "exit" => t.state = State::Exited,
            op => return Err(format!("unsupported instruction {op} ({i})")),
        }
        Ok(())
    }
}

/// Runs one launch of `func` to completion. `hook` runs after every
/// instruction with the global memory (tests use it to raise the retreat
/// flag mid-run). Returns the number of instructions executed.
pub fn run(
    func: &Function,
    launch: &Launch,
    mem: &mut Memory,
    hook: &mut dyn FnMut(&mut Memory),
) -> Result<u64, String> {
    let body = func.body.as_ref().ok_or("function has no body")?;
    let mut prog = Program {
        code: Vec::new(),
        labels: HashMap::new(),
        shared_syms: HashMap::new(),
        shared_size: 16,
    };
    flatten(body, &mut prog, launch.dynamic_shared);
    for p in func.params.iter().flatten() {
        for d in &p.declarators {
            if !launch.params.contains_key(&d.name) {
                return Err(format!("no value for parameter {}", d.name));
            }
        }
    }
    let m = Machine { prog, launch, func };
    let [gx, gy, gz] = launch.grid;
    let [bx, by, bz] = launch.block;
    let mut ctas = Vec::new();
    let mut threads = Vec::new();
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                let cta = ctas.len();
                // Shared memory starts as garbage, not zeros, so kernels that
                // forget to initialise it fail visibly.
                ctas.push(Cta {
                    ctaid: [x, y, z],
                    shared: vec![0xA5; m.prog.shared_size + 16],
                });
                for tz in 0..bz {
                    for ty in 0..by {
                        for tx in 0..bx {
                            threads.push(Thread {
                                cta,
                                tid: [tx, ty, tz],
                                pc: 0,
                                regs: HashMap::new(),
                                state: State::Running,
                                arrival: Arrival::Sync,
                            });
                        }
                    }
                }
            }
        }
    }
    let mut rng = launch.seed | 1;
    let mut next = move || {
        // xorshift: the schedule varies by seed.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut steps = 0u64;
    let mut runnable = Vec::with_capacity(threads.len());
    loop {
        let mut progressed = false;
        if launch.adversarial {
            runnable.clear();
            runnable.extend((0..threads.len()).filter(|&k| threads[k].state == State::Running));
            if let Some(&k) = runnable.get((next() % runnable.len().max(1) as u64) as usize) {
                let t = &mut threads[k];
                m.step(t, &mut ctas, mem).map_err(|e| {
                    format!("thread {:?} of cta {}: pc {}: {e}", t.tid, t.cta, t.pc)
                })?;
                hook(mem);
                steps += 1;
                progressed = true;
            }
        } else {
            for t in threads.iter_mut() {
                let quantum = 1 + (next() % 4);
                for _ in 0..quantum {
                    if t.state != State::Running {
                        break;
                    }
                    m.step(t, &mut ctas, mem).map_err(|e| {
                        format!("thread {:?} of cta {}: pc {}: {e}", t.tid, t.cta, t.pc)
                    })?;
                    hook(mem);
                    steps += 1;
                    progressed = true;
                }
            }
        }
        if steps > launch.max_steps {
            return Err(format!(
                "step limit {} exceeded (deadlock or endless loop)",
                launch.max_steps
            ));
        }
        for c in 0..ctas.len() {
            progressed |= release_barrier(&mut threads, c)?;
        }
        if threads.iter().all(|t| t.state == State::Exited) {
            return Ok(steps);
        }
        if !progressed {
            return Err("deadlock: no thread can run".into());
        }
    }
}
