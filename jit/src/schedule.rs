//! Load sinking: the one scheduling decision this JIT makes itself, between Cranelift's
//! optimiser and its lowering.
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
//! [`sink_loads`] moves, within each block, every load that cannot trap, and every pure
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
//! A walk is bounded ([`MAX_WALK`] instructions), so the pass is linear in the function's
//! size. Measured (callgrind, compiled-code instructions, `--vl 32`): see `cache::compile`.

use cranelift_codegen::ir::{Function, Inst, InstructionData, Opcode, Value};

/// The farthest an instruction is moved, in instructions passed.
const MAX_WALK: usize = 256;

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
        opcode: Opcode::Load,
        arg,
        offset,
        ..
    } = *data
    {
        let f = data.memflags_data(dfg)?;
        if f.trap_code().is_some() {
            return None;
        }
        let lo = i64::from(i32::from(offset));
        let size = i64::from(dfg.value_type(dfg.first_result(inst)).bytes());
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
pub(crate) fn sink_loads(func: &mut Function) {
    let blocks: Vec<_> = func.layout.blocks().collect();
    let mut insts = Vec::new();
    for block in blocks {
        insts.clear();
        insts.extend(func.layout.block_insts(block));
        for &inst in insts.iter().rev() {
            let Some(m) = mover(func, inst) else {
                continue;
            };
            let r = func.dfg.first_result(inst);
            let mut at = func.layout.next_inst(inst);
            let mut walked = 0;
            let mut user = false;
            while let Some(next) = at {
                user = func.dfg.inst_values(next).any(|v| v == r);
                if walked == MAX_WALK || user || !may_pass(func, &m, next) {
                    break;
                }
                walked += 1;
                at = func.layout.next_inst(next);
            }
            // A block ends in its terminator, which stops every walk.
            let Some(mut before) = at else { continue };
            if user {
                let u = before;
                // Stay before the other operands the user reads just before it: the one
                // next to it may be a load the lowering merges into it as a memory operand
                // (an unpack of two loads: `vpunpckldq x, x, [mem]`).
                while let Some(p) = func.layout.prev_inst(before) {
                    let feeds = |v: &Value| func.dfg.inst_values(u).any(|a| a == *v);
                    if p == inst
                        || mover(func, p).is_none()
                        || !func.dfg.inst_results(p).iter().any(feeds)
                    {
                        break;
                    }
                    before = p;
                }
            }
            if walked > 0 && func.layout.next_inst(inst) != Some(before) && before != inst {
                func.layout.remove_inst(inst);
                func.layout.insert_inst(inst, before);
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
