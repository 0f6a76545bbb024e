//! `DeviceEngine` through the engine contract (`tally_sched::engine::
//! contract`), on the deterministic device model of `common`. And what
//! the engine refuses: another SM partition than the whole GPU, and a
//! time-slice context switch.

mod common;

use common::ModelDevice;
use tally_gpu::{KernelSpec, Partition};
use tally_gpu_engine::DeviceEngine;
use tally_sched::engine::contract::check_all;
use tally_sched::engine::{Completion, Engine, LaunchRequest};

/// 432 blocks: the stand-in's 288 take three waves of 108.
fn kernel() -> KernelSpec {
    KernelSpec {
        name: "contract".into(),
        kind: tally_gpu::KernelKind::Elementwise,
        grid: tally_gpu::Dim3::linear(432),
        block: tally_gpu::Dim3::linear(256),
        registers_per_thread: 32,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: tally_gpu::Work {
            ffma: 1.0e9,
            ..tally_gpu::Work::default()
        },
        memory: tally_gpu::MemoryUse {
            l1_bytes: 1.0e6,
            l2_bytes: 1.0e6,
            dram_read_bytes: 5.0e5,
            dram_write_bytes: 5.0e5,
            l2_working_set: 1.0e6,
            inflight_bytes_per_warp: 512.0,
        },
    }
}

fn engine() -> DeviceEngine<ModelDevice> {
    DeviceEngine::new(ModelDevice::new())
}

#[test]
fn the_device_engine_keeps_the_engine_contract() {
    let mut make = || Box::new(engine()) as Box<dyn Engine>;
    check_all(&mut make, &kernel()).unwrap();
}

fn request(e: &DeviceEngine<ModelDevice>, k: tally_sched::engine::KernelId) -> LaunchRequest {
    LaunchRequest {
        job: 1,
        kernel: k,
        first_block: 0,
        blocks: 432,
        workers_per_sm: None,
        max_workers: None,
        preemptible: false,
        sms: Partition::whole(e.gpu()),
        priority: 0,
        with_overhead: true,
        host_delay_us: 0.0,
        max_sms: None,
    }
}

#[test]
fn a_launch_on_part_of_the_gpu_is_refused_with_the_reason() {
    let mut e = engine();
    let k = e.add_kernel(&kernel()).unwrap();
    let req = LaunchRequest {
        sms: Partition::first(54),
        ..request(&e, k)
    };
    let err = e.submit(req).unwrap_err().to_string();
    assert!(err.contains("whole GPU only"), "{err}");
}

#[test]
fn a_time_slice_switch_is_refused_at_the_next_step() {
    let mut e = engine();
    let k = e.add_kernel(&kernel()).unwrap();
    let id = e.submit(request(&e, k)).unwrap();
    e.set_context_saved(id, true);
    let mut out: Vec<Completion> = Vec::new();
    let err = e.settle(&mut out).unwrap_err().to_string();
    assert!(err.contains("time-slice switch"), "{err}");
}

#[test]
fn a_slice_with_no_stand_in_block_completes_at_once() {
    // One spec block of three maps to no stand-in block of two.
    let mut e = engine();
    let spec = KernelSpec {
        grid: tally_gpu::Dim3::linear(3),
        ..kernel()
    };
    let k = e.add_kernel(&spec).unwrap();
    let first = LaunchRequest {
        blocks: 1,
        ..request(&e, k)
    };
    let id = e.submit(first).unwrap();
    let mut out = Vec::new();
    e.settle(&mut out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].launch, out[0].blocks_done), (id, 1));
    assert_eq!(out[0].time_us, 0.0);
}
