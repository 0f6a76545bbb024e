//! Property tests of the simulated GPU: the invariants real hardware obeys
//! and that the predictor and scheduler rely on.

use proptest::prelude::*;
use tally_gpu::{
    Backend, Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Partition, SimBackend, Work,
    PRESET_NAMES,
};

/// Random but launchable kernels spanning compute-bound to streaming.
fn kernel() -> impl Strategy<Value = KernelSpec> {
    (
        (1u32..20_000, 1u32..=32, 16u32..=128, 0u32..=48),
        (0.0f64..1e10, 0.0f64..1e11, 0.0f64..1e8),
        (
            1e4f64..2e9,
            0.05f64..=1.0,
            0.0f64..=1.0,
            0.0f64..=0.5,
            0.0f64..2e8,
        ),
        128.0f64..4096.0,
    )
        .prop_map(
            |((grid, warps, regs, smem_kb), (fp32, tensor, other), mem, inflight)| {
                let (l1, l2_share, read_share, write_share, ws) = mem;
                let l2 = l1 * l2_share;
                KernelSpec {
                    name: "random".into(),
                    kind: KernelKind::Elementwise,
                    grid: Dim3::linear(grid),
                    block: Dim3::linear(warps * 32),
                    registers_per_thread: regs,
                    shared_mem_static: 0,
                    shared_mem_dynamic: smem_kb * 1024,
                    work: Work {
                        ffma: fp32,
                        tensor_flops: tensor,
                        other_warp_insts: other,
                        ..Work::default()
                    },
                    memory: MemoryUse {
                        l1_bytes: l1,
                        l2_bytes: l2,
                        dram_read_bytes: l2 * read_share,
                        dram_write_bytes: l2 * write_share * (1.0 - read_share),
                        l2_working_set: ws,
                        inflight_bytes_per_warp: inflight,
                    },
                }
            },
        )
        .prop_filter("launchable on every preset", |k| {
            GpuSpec::presets()
                .iter()
                .all(|g| tally_gpu::Occupancy::of(k, g).is_ok())
        })
}

fn gpu() -> impl Strategy<Value = GpuSpec> {
    prop::sample::select(PRESET_NAMES.to_vec()).prop_map(|n| GpuSpec::preset(n).expect("preset"))
}

/// Relative slack for the fixed-point tolerance.
const EPS: f64 = 1e-6;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn duration_non_increasing_in_sm_count(k in kernel(), gpu in gpu()) {
        let sim = SimBackend::noiseless(gpu.clone());
        let mut previous = f64::INFINITY;
        for sms in gpu.partition.sizes(gpu.sm_count) {
            let t = sim.standalone_us(&sim.prepare(&k, sms).expect("fits"));
            prop_assert!(t.is_finite() && t > 0.0);
            prop_assert!(t <= previous * (1.0 + EPS), "{sms} SMs: {t} > {previous}");
            previous = t;
        }
    }

    #[test]
    fn co_location_never_speeds_up(a in kernel(), b in kernel(), gpu in gpu(), split in 0.1f64..0.9) {
        let sim = SimBackend::noiseless(gpu.clone());
        let sa = gpu.partition.round_down((f64::from(gpu.sm_count) * split) as u32, gpu.sm_count);
        let sb = gpu.partition.round_down(gpu.sm_count - sa, gpu.sm_count);
        prop_assume!(sa + sb <= gpu.sm_count && sb >= gpu.partition.min_sms);
        let (pa, pb) = (sim.prepare(&a, sa).expect("fits"), sim.prepare(&b, sb).expect("fits"));
        let (ca, cb) = sim.co_run_us(&pa, &pb);
        prop_assert!(ca >= sim.standalone_us(&pa) * (1.0 - EPS));
        prop_assert!(cb >= sim.standalone_us(&pb) * (1.0 - EPS));
    }

    #[test]
    fn pairs_are_symmetric(a in kernel(), b in kernel(), gpu in gpu(), seed in 0u64..1000) {
        let sim = SimBackend::new(gpu.clone(), seed, 0.02);
        let half = gpu.partition.round_down(gpu.sm_count / 2, gpu.sm_count);
        let (p1, p2) = (Partition::first(half), Partition::first(half).after(half));
        let (ma, mb) = sim.co_run(&a, p1, &b, p2).expect("runs");
        let (mb2, ma2) = sim.co_run(&b, p1, &a, p2).expect("runs");
        prop_assert!((ma.duration_us - ma2.duration_us).abs() <= ma.duration_us * EPS);
        prop_assert!((mb.duration_us - mb2.duration_us).abs() <= mb.duration_us * EPS);
    }

    #[test]
    fn more_co_runner_demand_never_helps(
        a in kernel(), b in kernel(), gpu in gpu(), scale in 1.0f64..8.0, inflight in 1.0f64..8.0,
    ) {
        let sim = SimBackend::noiseless(gpu.clone());
        let half = gpu.partition.round_down(gpu.sm_count / 2, gpu.sm_count);
        let mut heavier = b.clone();
        heavier.memory.l1_bytes *= scale;
        heavier.memory.l2_bytes *= scale;
        heavier.memory.dram_read_bytes *= scale;
        heavier.memory.dram_write_bytes *= scale;
        heavier.memory.l2_working_set *= scale;
        heavier.memory.inflight_bytes_per_warp *= inflight;
        let pa = sim.prepare(&a, half).expect("fits");
        let (base, _) = sim.co_run_us(&pa, &sim.prepare(&b, half).expect("fits"));
        let (loaded, _) = sim.co_run_us(&pa, &sim.prepare(&heavier, half).expect("fits"));
        prop_assert!(loaded >= base * (1.0 - EPS), "{loaded} < {base}");
    }

    #[test]
    fn noisy_co_run_stays_above_standalone_within_noise(a in kernel(), b in kernel(), seed in 0u64..100) {
        let gpu = GpuSpec::preset("h100-sxm").expect("preset");
        let sim = SimBackend::new(gpu.clone(), seed, 0.01);
        let (p1, p2) = (Partition::first(64), Partition::first(64).after(64));
        let solo = sim.standalone(&a, p1).expect("runs").duration_us;
        let (co, _) = sim.co_run(&a, p1, &b, p2).expect("runs");
        // Two independent 1 % lognormal draws: 8 sigma of their ratio.
        prop_assert!(co.duration_us >= solo * (-0.08f64 * 2f64.sqrt()).exp());
    }
}

#[test]
fn counters_are_consistent_with_the_model() {
    let gpu = GpuSpec::preset("a100-40gb").expect("preset");
    let sim = SimBackend::noiseless(gpu.clone());
    let stream = KernelSpec {
        name: "copy".into(),
        kind: KernelKind::Copy,
        grid: Dim3::linear(16_384),
        block: Dim3::linear(256),
        registers_per_thread: 16,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: Work::default(),
        memory: MemoryUse {
            l1_bytes: 2e9,
            l2_bytes: 2e9,
            dram_read_bytes: 1e9,
            dram_write_bytes: 1e9,
            l2_working_set: 0.0,
            inflight_bytes_per_warp: 512.0,
        },
    };
    let m = sim
        .standalone(&stream, Partition::whole(&gpu))
        .expect("runs");
    let c = |name: &str| {
        m.counters
            .get(tally_gpu::Counter::from_name(name).expect("known"))
    };
    assert!((c("gpu__time_duration.sum") - m.duration_us * 1e3).abs() < 1e-6);
    // A copy streams: DRAM busy, nothing hits in L2.
    assert!(c("dram__throughput.avg.pct_of_peak_sustained_elapsed") > 70.0);
    // Reads all miss; writes are absorbed by L2 (write-back), so ~50 %.
    assert!((c("lts__t_sector_hit_rate.pct") - 50.0).abs() < 1e-6);
    assert_eq!(c("dram__bytes_read.sum"), 1e9);
    assert_eq!(c("launch__grid_size"), 16_384.0);
    assert_eq!(c("launch__occupancy_limit_warps"), 8.0);
    let waves = c("launch__waves_per_multiprocessor");
    assert!((waves - 16_384.0 / (8.0 * 108.0)).abs() < 1e-9);
}
