; stencil5_vaddr.s -- 2D 5-point stencil on an N x N f32 grid, vector-address form:
;   out[y][x] = 0.5 * in[y][x] + 0.125 * (in[y][x-1] + in[y][x+1] + in[y-1][x] + in[y+1][x])
; for the interior points (1 <= x, y <= N-2), as V.FMUL.S then four fused V.FMA.S in the
; order west, east, north, south (the same arithmetic as stencil5_lc0). The border of out is
; not written.
;
; Bench kernel. Same data, loops and output as stencil5_lc0.s; only the loads differ: each
; lane's address of its centre point is built from V.LC0 (`V.LC0; V.SHL 2; V.ADD row`), and
; the five points are unscaled-immediate loads off it, `V.LWI.U [v1 + imm]`, as a compiler
; emits when it does not prove the accesses contiguous. The store stays contiguous. One
; element = one interior point.

        .equ    N, 64                   ; grid width and height (rewritten by the harness)
        .equ    ROWB, N + N + N + N     ; row bytes
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC + ROWB + 4      ; &in[1][1]
        S.LI    s2, DST + ROWB + 4      ; &out[1][1]
        S.LI    s3, N - 2               ; points per row
        S.LI    s4, N - 2               ; rows left
        S.LI    s10, 0x3f000000         ; 0.5f
        S.LI    s11, 0x3e000000         ; 0.125f
row:    LOOP    s3
        V.LC0   v7
        V.SHL   v7, v7, 2
        V.ADD   v7, v7, s1                      ; &in[y][x] per lane
        V.LWI.U [v7 + 0], ->v1                  ; centre
        V.LWI.U [v7 - 4], ->v2                  ; west
        V.LWI.U [v7 + 4], ->v3                  ; east
        V.LWI.U [v7 - ROWB], ->v4               ; north
        V.LWI.U [v7 + ROWB], ->v5               ; south
        V.FMUL.S v6, v1, s10
        V.FMA.S v6, v2, s11
        V.FMA.S v6, v3, s11
        V.FMA.S v6, v4, s11
        V.FMA.S v6, v5, s11
        V.SW    v6, [s2, lc0<<2, 0]
        ENDLOOP
        S.ADD   s1, s1, ROWB
        S.ADD   s2, s2, ROWB
        S.SUB   s4, s4, 1
        BNE     s4, 0, row
        HALT
