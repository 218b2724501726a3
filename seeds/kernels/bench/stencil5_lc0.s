; stencil5_lc0.s -- 2D 5-point stencil on an N x N f32 grid, contiguous (lc0) form:
;   out[y][x] = 0.5 * in[y][x] + 0.125 * (in[y][x-1] + in[y][x+1] + in[y-1][x] + in[y+1][x])
; for the interior points (1 <= x, y <= N-2), as V.FMUL.S then four fused V.FMA.S in the
; order west, east, north, south (acc = 0.5*c; acc = fma(w, 0.125, acc); ...). The border of
; out is not written.
;
; Bench kernel. The harness rewrites the `.equ N` line (the grid is 4 N^2 bytes) and fills
; in host-side with finite values. One hardware loop per interior row (trip N-2), the rows
; walked by a scalar loop. Every neighbour is a contiguous load of the centre's row pointer
; with a byte offset: -4 / +4 for west and east, -4N / +4N for north and south. One element
; = one interior point. stencil5_vaddr.s is the same kernel with vector addresses.

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
        V.LW    [s1, lc0<<2, 0], ->v1           ; centre
        V.LW    [s1, lc0<<2, -4], ->v2          ; west
        V.LW    [s1, lc0<<2, 4], ->v3           ; east
        V.LW    [s1, lc0<<2, -ROWB], ->v4       ; north
        V.LW    [s1, lc0<<2, ROWB], ->v5        ; south
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
