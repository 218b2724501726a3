//! Instruction order within a block, decided between Cranelift's optimiser and its
//! lowering: loads sunk to their first use ([`sink_loads`]) and multiply-adds clustered by
//! the broadcast they read ([`cluster_shared`]).
//!
//! Cranelift's optimiser (the e-graph pass) places every pure value where it is first
//! needed, elaborating an instruction's arguments depth first and in order. A chain of fused
//! multiply-adds `acc = fma(x_k, y_k, acc)` has its chained argument last, so each load of
//! the chain is placed before the recursion into the rest of the chain: all the chain's
//! loads first, in reverse, and then all its multiply-adds (matmul256's column loop: 16
//! loads of tile rows live at once for every chunk, on 16 vector registers that also hold
//! the row's 16 broadcasts, so most of them were spilled and reloaded). Loads the
//! translator keeps in program order (an accumulator read before the store that writes it
//! back) sit where the translator emitted them: every chunk's load at the top of the body,
//! live across the whole body.
//!
//! [`sink_loads`] moves, within each block, every vector load that cannot trap (extending
//! loads included), and every pure
//! instruction of one argument (a bitcast, a widening, a splat), down to just before the
//! first instruction that uses its result, unless something it must not pass comes first:
//! the block's terminator, a call, an instruction with other side effects, or a store
//! that may write what the load reads. A load Cranelift may move anywhere (`can_move`: the
//! streaming copy's proven loads) passes stores; any other load passes only a store to the
//! same address value whose bytes are disjoint from its own (the other chunks of the
//! register it writes back). A load passes other loads, and instructions that may trap
//! (the load cannot, so a trap before it leaves its value unused). Moving an instruction
//! later within its block keeps its arguments defined before it and its result before its
//! uses, and the lowering then runs with the optimiser off (see `cache::compile`), so
//! the order stays. A unary instruction moved later ends its argument's live range later
//! and starts its result's later: never more values live at once. Instructions are taken
//! from the block's end backwards, so a chain (a load, its bitcast) moves as a whole: the
//! bitcast first, then the load to just before it.
//!
//! Each block is one pass (see [`sink_loads`]): linear in the function's size (a load
//! checks at most [`MAX_STORES`] stores). Measured (callgrind, compiled-code instructions,
//! `--vl 32`): see `cache::compile`.

use cranelift_codegen::ir::{Block, Function, Inst, InstructionData, Opcode, Value, ValueDef};

/// The most stores a load that may not pass every store ([`may_pass`]) is checked
/// against: past them it stays (the pass stays linear).
const MAX_STORES: usize = 256;

/// The farthest a multiply-add and its operands rise ([`cluster_shared`]), in instructions
/// passed: enough for the eighth chunk's chain of matmul256's column loop (16 multiply-adds
/// a chunk, each with its load and bitcast) to join the first seven, whose chains precede
/// it. With 256 only four chains joined: the 16 broadcasts were reloaded once per
/// four chunks and four chains ran in parallel (12.1 G multiply-adds/s at 256 KiB, VL 32);
/// with all eight, 14.2 (three alternating runs each). Compile time unchanged (35 ms for
/// that region either way).
const MAX_RISE: usize = 1024;

/// The most chains one cluster of [`cluster_shared`] interleaves: eight chunks' chains
/// (a VL-32 register of f32) each keep an accumulator in a vector register, and with 16 of
/// them (VL 64) the allocator spilled most (fir8_lc0 at VL 64: 2,139 -> 1,861 Melem/s).
const MAX_CLUSTER: usize = 8;

/// What may move: a load that cannot trap (with whether it may pass stores, and its
/// address, offset and size for the disjointness test), or a pure instruction of one
/// argument.
enum Mover {
    Load {
        can_move: bool,
        addr: Value,
        lo: i64,
        hi: i64,
    },
    Unary,
}

fn mover(func: &Function, inst: Inst) -> Option<Mover> {
    let dfg = &func.dfg;
    let data = &dfg.insts[inst];
    let op = data.opcode();
    // Vector values only: scalar loads feed addresses and lane extractions, where moving
    // them lengthened general-register live ranges (spmv_csr +2.5% instructions).
    if dfg.inst_results(inst).len() != 1 || !dfg.value_type(dfg.first_result(inst)).is_vector() {
        return None;
    }
    if let InstructionData::Load {
        opcode,
        arg,
        offset,
        ..
    } = *data
    {
        // Bytes read: the vector, or the 8 bytes an extending load widens.
        let size = match opcode {
            Opcode::Load => i64::from(dfg.value_type(dfg.first_result(inst)).bytes()),
            Opcode::Sload8x8
            | Opcode::Uload8x8
            | Opcode::Sload16x4
            | Opcode::Uload16x4
            | Opcode::Sload32x2
            | Opcode::Uload32x2 => 8,
            _ => return None,
        };
        let f = data.memflags_data(dfg)?;
        if f.trap_code().is_some() {
            return None;
        }
        let lo = i64::from(i32::from(offset));
        return Some(Mover::Load {
            can_move: f.can_move(),
            addr: arg,
            lo,
            hi: lo + size,
        });
    }
    let pure = !(op.can_load()
        || op.can_store()
        || op.can_trap()
        || op.is_call()
        || op.is_terminator()
        || op.other_side_effects());
    (pure && dfg.inst_args(inst).len() == 1).then_some(Mover::Unary)
}

/// Whether `m`, moving down, may pass `inst` (which does not use its result).
fn may_pass(func: &Function, m: &Mover, inst: Inst) -> bool {
    let dfg = &func.dfg;
    let data = &dfg.insts[inst];
    let op = data.opcode();
    if op.is_terminator() || op.is_call() || op.other_side_effects() {
        return false;
    }
    if !op.can_store() {
        // Pure, a load, or an instruction that may trap.
        return true;
    }
    let Mover::Load {
        can_move,
        addr,
        lo,
        hi,
    } = *m
    else {
        return true;
    };
    if can_move {
        return true;
    }
    match *data {
        InstructionData::Store {
            opcode: Opcode::Store,
            args: [x, to],
            offset,
            ..
        } if to == addr => {
            let slo = i64::from(i32::from(offset));
            let shi = slo + i64::from(dfg.value_type(x).bytes());
            shi <= lo || hi <= slo
        }
        _ => false,
    }
}

/// Sink loads and unary instructions towards their first use (see the module docs).
///
/// Per block, in one pass from its end backwards, with the block's positions taken once:
/// an instruction that never moves (a barrier: terminator, call, other side effect, store)
/// keeps its place, so the first barrier after a mover is looked up in the block's original
/// order (a load that may not pass stores checks at most [`MAX_STORES`] of them); its first
/// user comes from a table of the block's uses, compared in the current layout (a user
/// moved already is where it now is). Linear in the block's size (the walk from each mover
/// to its target it replaces took a fifth of a baseline compile).
pub(crate) fn sink_loads(func: &mut Function) {
    let blocks: Vec<_> = func.layout.blocks().collect();
    let mut insts: Vec<Inst> = Vec::new();
    // Per position: the first universal barrier at or after it.
    let mut wall: Vec<usize> = Vec::new();
    // Positions of stores that are not universal barriers.
    let mut stores: Vec<usize> = Vec::new();
    // (value, user) for every use in the block, sorted by value, users in block order.
    let mut uses: Vec<(Value, Inst)> = Vec::new();
    let mut uargs: Vec<Value> = Vec::new();
    for block in blocks {
        insts.clear();
        insts.extend(func.layout.block_insts(block));
        let n = insts.len();
        wall.clear();
        wall.resize(n + 1, n);
        stores.clear();
        uses.clear();
        for (k, &i) in insts.iter().enumerate() {
            let op = func.dfg.insts[i].opcode();
            if op.is_terminator() || op.is_call() || op.other_side_effects() {
                wall[k] = k;
            } else if op.can_store() {
                stores.push(k);
            }
            uses.extend(func.dfg.inst_values(i).map(|v| (v, i)));
        }
        for k in (0..n).rev() {
            if wall[k] != k {
                wall[k] = wall[k + 1];
            }
        }
        uses.sort_by_key(|&(v, _)| v);
        for k in (0..n).rev() {
            let inst = insts[k];
            let Some(m) = mover(func, inst) else {
                continue;
            };
            // The first barrier after it: a universal one (a block ends in its terminator,
            // so there is one), or for a load that may not pass every store, the first
            // store it may not pass, or the one past the most it checks.
            let mut barrier = wall[k].min(n - 1);
            if let Mover::Load {
                can_move: false, ..
            } = m
            {
                let from = stores.partition_point(|&s| s <= k);
                let passed = stores[from..]
                    .iter()
                    .take(MAX_STORES)
                    .take_while(|&&s| s < wall[k] && may_pass(func, &m, insts[s]))
                    .count();
                if let Some(&s) = stores.get(from + passed).filter(|&&s| s < wall[k]) {
                    barrier = s;
                }
            }
            let barrier = insts[barrier];
            let r = func.dfg.first_result(inst);
            let lo = uses.partition_point(|&(v, _)| v < r);
            let first_user = uses[lo..]
                .iter()
                .take_while(|&&(v, _)| v == r)
                .map(|&(_, u)| u)
                .min_by(|a, b| func.layout.pp_cmp(*a, *b));
            let (mut before, user) = match first_user {
                Some(u) if func.layout.pp_cmp(u, barrier) != std::cmp::Ordering::Greater => {
                    (u, true)
                }
                _ => (barrier, false),
            };
            if user {
                let u = before;
                // Sorted: a branch's arguments may be hundreds of values.
                uargs.clear();
                uargs.extend(func.dfg.inst_values(u));
                uargs.sort_unstable();
                // Stay before the other operands the user reads just before it: the one
                // next to it may be a load the lowering merges into it as a memory operand
                // (an unpack of two loads: `vpunpckldq x, x, [mem]`).
                while let Some(p) = func.layout.prev_inst(before) {
                    if p == inst
                        || mover(func, p).is_none()
                        || !func
                            .dfg
                            .inst_results(p)
                            .iter()
                            .any(|v| uargs.binary_search(v).is_ok())
                    {
                        break;
                    }
                    before = p;
                }
            }
            if before != inst && func.layout.next_inst(inst) != Some(before) {
                func.layout.remove_inst(inst);
                func.layout.insert_inst(inst, before);
            }
        }
    }
}

/// Whether moving `m` (a [`mover`]) up to just after `after` keeps it correct: it passes
/// each instruction on the way as [`may_pass`] allows moving down past it (the same rule
/// either way: a load crosses no store it may alias, no call, no other side effect).
/// Farther than [`MAX_RISE`] instructions it stays (the pass stays linear).
fn may_rise(func: &Function, m: Inst, after: Inst) -> bool {
    let Some(mv) = mover(func, m) else {
        return false;
    };
    let mut at = func.layout.next_inst(after);
    let mut walked = 0;
    while let Some(i) = at {
        if i == m {
            return true;
        }
        walked += 1;
        if walked > MAX_RISE || !may_pass(func, &mv, i) {
            return false;
        }
        at = func.layout.next_inst(i);
    }
    false
}

/// Whether `v` is a broadcast (`splat`, through bitcasts).
fn is_broadcast(func: &Function, mut v: Value) -> bool {
    loop {
        let ValueDef::Result(d, _) = func.dfg.value_def(v) else {
            return false;
        };
        match func.dfg.insts[d] {
            InstructionData::Unary {
                opcode: Opcode::Splat,
                ..
            } => return true,
            InstructionData::LoadNoOffset {
                opcode: Opcode::Bitcast,
                arg,
                ..
            } => v = arg,
            _ => return false,
        }
    }
}

/// Move `i` of `block` to just after `p`, with the operands defined between them (loads and
/// unary instructions that [`may_rise`] there, rising in their order): whether it moved
/// (else nothing moved).
fn rise_after(func: &mut Function, block: Block, i: Inst, p: Inst) -> bool {
    let mut rise = Vec::new();
    let mut stack: Vec<Value> = func.dfg.inst_args(i).to_vec();
    while let Some(v) = stack.pop() {
        let ValueDef::Result(d, _) = func.dfg.value_def(v) else {
            continue;
        };
        if func.layout.inst_block(d) != Some(block)
            || func.layout.pp_cmp(d, p) != std::cmp::Ordering::Greater
            || rise.contains(&d)
        {
            continue;
        }
        if !may_rise(func, d, p) {
            return false;
        }
        rise.push(d);
        stack.extend(func.dfg.inst_args(d).iter().copied());
    }
    rise.sort_by(|a, b| func.layout.pp_cmp(*a, *b));
    rise.push(i);
    let mut after = p;
    for m in rise {
        func.layout.remove_inst(m);
        match func.layout.next_inst(after) {
            Some(n) => func.layout.insert_inst(m, n),
            None => func.layout.append_inst(m, block),
        }
        after = m;
    }
    true
}

/// Cluster the multiplies that read one broadcast (a value from outside their block, such
/// as a broadcast hoisted out of the loop, or a `splat` of the block, such as a FIR's taps
/// made in the loop's round): a vector `fma` or `fmul` reading one moves up to just after
/// the previous `fma` or `fmul` of its block that reads it, with the loads and unary
/// instructions that feed it (which [`may_rise`] there), when all its other operands are
/// ready there; at most [`MAX_CLUSTER`] chains join one cluster. Chunks' multiply-add
/// chains over the same broadcasts then run step by step, and a broadcast the register
/// allocator keeps in memory is reloaded once for all of them (matmul256: 11 of its 16
/// broadcasts were reloaded per chunk; its streaming iteration 391 -> 343 instructions).
/// A chain that starts with a multiply (`x0 * k0`, then multiply-adds) joins only when
/// that multiply joins too, its first multiply-add's accumulator then being ready: fir8's
/// eight chains, each eight dependent operations, interleaved (fir8_lc0 and fir8_vaddr at
/// 256 KiB, VL 32, best of four alternating runs: 2,212 -> 2,432 and 2,211 -> 2,500
/// Melem/s). Any pure instruction, not only multiplies, made spmv_csr execute 4.4% more.
pub(crate) fn cluster_shared(func: &mut Function) {
    use std::collections::HashMap;
    let blocks: Vec<_> = func.layout.blocks().collect();
    // Per shared value: the last multiply that read it, and how many chains its cluster
    // has joined.
    let mut last: HashMap<Value, (Inst, usize)> = HashMap::new();
    for block in blocks {
        last.clear();
        let mut cur = func.layout.first_inst(block);
        while let Some(i) = cur {
            cur = func.layout.next_inst(i);
            let dfg = &func.dfg;
            let op = dfg.insts[i].opcode();
            if !matches!(op, Opcode::Fma | Opcode::Fmul)
                || !dfg.value_type(dfg.first_result(i)).is_vector()
            {
                continue;
            }
            let args: Vec<Value> = dfg.inst_args(i).to_vec();
            let outside = |v: &Value| match dfg.value_def(*v) {
                ValueDef::Result(d, _) => {
                    func.layout.inst_block(d) != Some(block) || is_broadcast(func, *v)
                }
                ValueDef::Param(b, _) => b != block,
                _ => false,
            };
            let shared: Vec<Value> = args.iter().copied().filter(outside).collect();
            let target = shared
                .iter()
                .filter_map(|v| last.get(v).copied())
                .max_by(|a, b| func.layout.pp_cmp(a.0, b.0))
                .filter(|&(_, n)| n < MAX_CLUSTER);
            // It joins its cluster where it is already next to the cluster's last multiply,
            // or where it can rise there.
            let joined = match target {
                Some((p, n))
                    if func.layout.next_inst(p) == Some(i) || rise_after(func, block, i, p) =>
                {
                    n + 1
                }
                _ => 1,
            };
            for v in shared {
                last.insert(v, (i, joined));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sink_loads;
    use cranelift_codegen::ir::types::{I8X16, I64};
    use cranelift_codegen::ir::{
        AbiParam, Function, Inst, InstBuilder, MemFlagsData, Signature, UserFuncName,
    };
    use cranelift_codegen::isa::CallConv;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    /// One block: `p` and `q` are two addresses; `body` emits the instructions and
    /// returns the ones whose order the test checks.
    fn build(
        body: impl FnOnce(&mut FunctionBuilder, [cranelift_codegen::ir::Value; 2]) -> Vec<Inst>,
    ) -> (Function, Vec<Inst>) {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(I64));
        sig.params.push(AbiParam::new(I64));
        let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let blk = b.create_block();
        b.append_block_params_for_function_params(blk);
        b.switch_to_block(blk);
        b.seal_block(blk);
        let (p, q) = (b.block_params(blk)[0], b.block_params(blk)[1]);
        let marks = body(&mut b, [p, q]);
        b.ins().return_(&[]);
        let isa = crate::cache::new_isa(crate::cache::Settings::Quick).expect("host ISA");
        b.finalize(isa.frontend_config());
        (func, marks)
    }

    fn order(func: &Function) -> Vec<Inst> {
        let blk = func.layout.entry_block().expect("entry");
        func.layout.block_insts(blk).collect()
    }

    fn pos(func: &Function, i: Inst) -> usize {
        order(func).iter().position(|&x| x == i).expect("in layout")
    }

    fn inst_of(b: &FunctionBuilder, v: cranelift_codegen::ir::Value) -> Inst {
        b.func.dfg.value_def(v).unwrap_inst()
    }

    #[test]
    fn a_load_moves_to_its_use_past_what_it_may_pass_and_no_further() {
        let nt = MemFlagsData::new().with_notrap();
        let (mut func, m) = build(|b, [p, q]| {
            // Moves past a store to the same address at disjoint bytes and past another load.
            let z = b.ins().iconst(I64, 0);
            let zv = b.ins().splat(I8X16, z);
            let a = b.ins().load(I8X16, nt, p, 0);
            b.ins().store(nt, zv, p, 16);
            let c = b.ins().load(I8X16, nt, p, 32);
            let s = b.ins().iadd(a, c);
            // Stops before a store to another address that may alias it.
            let d = b.ins().load(I8X16, nt, p, 48);
            let st = b.ins().store(nt, s, q, 0);
            let t = b.ins().iadd(d, s);
            // A `can_move` load passes that store.
            let e = b
                .ins()
                .load(I8X16, nt.with_can_move().with_readonly(), p, 64);
            let st2 = b.ins().store(nt, t, q, 16);
            let u = b.ins().iadd(e, t);
            b.ins().store(nt, u, q, 32);
            vec![
                inst_of(b, a),
                inst_of(b, c),
                inst_of(b, s),
                inst_of(b, d),
                st,
                inst_of(b, e),
                st2,
                inst_of(b, u),
            ]
        });
        let [a, c, s, d, st, e, st2, u] = m[..] else {
            unreachable!()
        };
        sink_loads(&mut func);
        // `a` stays before `c`, the other operand next to their user.
        assert_eq!(pos(&func, a) + 1, pos(&func, c));
        assert_eq!(pos(&func, c) + 1, pos(&func, s));
        assert_eq!(
            pos(&func, d) + 1,
            pos(&func, st),
            "a load never passes a store that may alias it"
        );
        assert!(pos(&func, e) > pos(&func, st2));
        assert_eq!(pos(&func, e) + 1, pos(&func, u));
    }

    /// Two chunks' chains `acc = fma(x, k0, acc); acc = fma(x', k1, acc)` over broadcasts
    /// `k0`, `k1` from the entry block, the accumulators loaded from `q`; each chunk's store
    /// right after its chain (`Some`: through another address value, which may alias the
    /// accumulators, or to `q` at the chunk's own disjoint bytes) or both at the end
    /// (`None`); returns the function and the four multiply-adds (chunk 0 by k0, by k1,
    /// chunk 1 by k0, by k1).
    fn two_chains(store_between: Option<bool>) -> (Function, Vec<Inst>) {
        use cranelift_codegen::ir::types::F32X4;
        let nt = MemFlagsData::new().with_notrap();
        let mv = nt.with_can_move().with_readonly();
        build(|b, [p, q]| {
            let f = b.ins().f32const(1.5);
            let k0 = b.ins().splat(F32X4, f);
            let k1 = b.ins().splat(F32X4, f);
            let body = b.create_block();
            b.ins().jump(body, &[]);
            b.switch_to_block(body);
            b.seal_block(body);
            let mut fmas = Vec::new();
            let mut sums = Vec::new();
            for c in 0..2i32 {
                let acc = b.ins().load(F32X4, nt, q, 16 * c);
                let x0 = b.ins().load(F32X4, mv, p, 16 * c);
                let a = b.ins().fma(x0, k0, acc);
                let x1 = b.ins().load(F32X4, mv, p, 64 + 16 * c);
                let s = b.ins().fma(x1, k1, a);
                fmas.extend([inst_of(b, a), inst_of(b, s)]);
                match store_between {
                    Some(true) => b.ins().store(nt, s, p, 128 + 16 * c),
                    Some(false) => b.ins().store(nt, s, q, 16 * c),
                    None => {
                        sums.push(s);
                        continue;
                    }
                };
            }
            for (c, s) in sums.into_iter().enumerate() {
                b.ins().store(nt, s, q, 16 * c as i32);
            }
            fmas
        })
    }

    #[test]
    fn multiply_adds_reading_one_broadcast_alternate_between_chains() {
        let order = |func: &Function, f: &[Inst]| {
            let blk = func.layout.blocks().nth(1).expect("two blocks");
            let all: Vec<Inst> = func.layout.block_insts(blk).collect();
            f.iter()
                .map(|i| all.iter().position(|x| x == i).expect("in its block"))
                .collect::<Vec<_>>()
        };
        // Chunk 1's multiply-add by k0 follows chunk 0's, before chunk 0's by k1; also when
        // chunk 0's store between them writes other bytes of the accumulators' address.
        for between in [None, Some(false)] {
            let (mut func, f) = two_chains(between);
            super::cluster_shared(&mut func);
            let at = order(&func, &f);
            assert!(at[0] < at[2] && at[2] < at[1] && at[1] < at[3], "{at:?}");
        }
        // With chunk 0's store between the chains, chunk 1's accumulator load (which may
        // read what it writes) does not rise past it, so its chain stays where it is.
        let (mut func, f) = two_chains(Some(true));
        let before: Vec<Inst> = func
            .layout
            .block_insts(func.layout.blocks().nth(1).unwrap())
            .collect();
        super::cluster_shared(&mut func);
        let after: Vec<Inst> = func
            .layout
            .block_insts(func.layout.blocks().nth(1).unwrap())
            .collect();
        assert_eq!(before, after);
        assert_eq!(f.len(), 4);
    }

    #[test]
    fn chains_from_a_multiply_by_broadcasts_of_their_block_interleave_eight_at_a_time() {
        use cranelift_codegen::ir::types::F32X4;
        // Ten chunks' chains `acc = x0 * k0; acc = fma(x1, k1, acc); acc = fma(x2, k2, acc)`
        // one after the other, the broadcasts made in the same block (a FIR's taps); the
        // results stored at the end. Returns each chunk's three multiplies.
        let mv = MemFlagsData::new()
            .with_notrap()
            .with_can_move()
            .with_readonly();
        let nt = MemFlagsData::new().with_notrap();
        let (mut func, m) = build(|b, [p, q]| {
            let f = b.ins().f32const(1.5);
            let k: Vec<_> = (0..3).map(|_| b.ins().splat(F32X4, f)).collect();
            let mut marks = Vec::new();
            let mut sums = Vec::new();
            for c in 0..10i32 {
                let x0 = b.ins().load(F32X4, mv, p, 16 * c);
                let mut acc = b.ins().fmul(x0, k[0]);
                marks.push(inst_of(b, acc));
                for (t, &kt) in k.iter().enumerate().skip(1) {
                    let x = b.ins().load(F32X4, mv, p, 16 * c + 4 * t as i32);
                    acc = b.ins().fma(x, kt, acc);
                    marks.push(inst_of(b, acc));
                }
                sums.push(acc);
            }
            for (c, s) in sums.into_iter().enumerate() {
                b.ins().store(nt, s, q, 16 * c as i32);
            }
            marks
        });
        super::cluster_shared(&mut func);
        let at = |c: usize, t: usize| pos(&func, m[3 * c + t]);
        // The first eight chains step by step: every chunk's multiply by k_t before any
        // chunk's by k_(t+1).
        for t in 0..2 {
            let last = (0..8).map(|c| at(c, t)).max().unwrap();
            let next = (0..8).map(|c| at(c, t + 1)).min().unwrap();
            assert!(last < next, "tap {t}: {last} >= {next}");
        }
        // Chunks 8 and 9 start a cluster of their own after the first eight chains.
        let first_end = (0..8).map(|c| at(c, 2)).max().unwrap();
        assert!(first_end < at(8, 0), "{first_end} >= {}", at(8, 0));
        assert!(at(8, 0) < at(9, 0) && at(9, 0) < at(8, 1) && at(9, 1) < at(8, 2));
    }

    #[test]
    fn an_extending_load_counts_the_eight_bytes_it_reads() {
        let nt = MemFlagsData::new().with_notrap();
        for (at, passes) in [(8, true), (4, false)] {
            let (mut func, m) = build(|b, [p, _]| {
                let z = b.ins().iconst(I64, 0);
                let zv = b.ins().splat(I8X16, z);
                let a = b.ins().sload8x8(nt, p, 0);
                let st = b.ins().store(nt, zv, p, at);
                let a8 = b.ins().bitcast(I8X16, MemFlagsData::new(), a);
                b.ins().store(nt, a8, p, 64);
                vec![inst_of(b, a), st]
            });
            sink_loads(&mut func);
            assert_eq!(
                pos(&func, m[0]) > pos(&func, m[1]),
                passes,
                "store at +{at}"
            );
        }
    }

    /// A load's chain (the load, its bitcast) moves to its user however far it is, and a
    /// load that may not pass every store is checked against at most `MAX_STORES` of them.
    #[test]
    fn a_chain_moves_any_distance_and_a_load_checks_a_bounded_number_of_stores() {
        use cranelift_codegen::ir::types::I32X4;
        let nt = MemFlagsData::new().with_notrap();
        for stores in [super::MAX_STORES, super::MAX_STORES + 1, 600] {
            let (mut func, m) = build(|b, [p, q]| {
                let a = b.ins().load(I8X16, nt, p, 0);
                let c = b.ins().bitcast(I32X4, MemFlagsData::new(), a);
                // Far more instructions between them than any walk took: pure ones.
                let z = b.ins().iconst(I64, 1);
                let mut acc = b.ins().splat(I32X4, z);
                for _ in 0..400 {
                    acc = b.ins().iadd(acc, acc);
                }
                let u = b.ins().iadd(c, acc);
                // Stores to other bytes of `p`'s address, which the second load passes.
                let l = b.ins().load(I8X16, nt, p, 16);
                for k in 0..stores {
                    b.ins().store(nt, u, p, 32 + 16 * k as i32);
                }
                let w = b.ins().iadd(l, l);
                b.ins().store(nt, w, q, 0);
                vec![
                    inst_of(b, a),
                    inst_of(b, c),
                    inst_of(b, u),
                    inst_of(b, l),
                    inst_of(b, w),
                ]
            });
            let [a, c, u, l, w] = m[..] else {
                unreachable!()
            };
            sink_loads(&mut func);
            assert_eq!(pos(&func, a) + 1, pos(&func, c));
            assert_eq!(pos(&func, c) + 1, pos(&func, u));
            // Past every store up to the bound; at the bound, it stays before the next.
            let passes = stores <= super::MAX_STORES;
            let at = pos(&func, l);
            assert_eq!(at + 1 == pos(&func, w), passes, "{stores} stores");
            if !passes {
                assert_eq!(at, pos(&func, u) + 1 + super::MAX_STORES, "{stores} stores");
            }
        }
    }

    #[test]
    fn a_load_overlapping_a_store_keeps_its_place() {
        let nt = MemFlagsData::new().with_notrap();
        let (mut func, m) = build(|b, [p, _]| {
            let a = b.ins().load(I8X16, nt, p, 0);
            let z = b.ins().iconst(I64, 0);
            let zv = b.ins().splat(I8X16, z);
            let st = b.ins().store(nt, zv, p, 8);
            let s = b.ins().iadd(a, zv);
            b.ins().store(nt, s, p, 64);
            vec![inst_of(b, a), st]
        });
        let before = order(&func);
        sink_loads(&mut func);
        assert!(pos(&func, m[0]) < pos(&func, m[1]));
        // The splat moved down to the store that uses it; nothing passed the store.
        assert_eq!(order(&func).len(), before.len());
    }
}
