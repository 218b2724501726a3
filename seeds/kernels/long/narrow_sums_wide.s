; narrow_sums_wide.s -- per-lane sums of halfwords and of byte products at the edges of
; their ranges, long enough (66000 iterations at VL 32, each loop ending in a masked tail)
; that a JIT keeping partial sums in i32 lanes must fold them into the 64-bit lanes on the
; way: a fold one iteration late overflows. Too long for every VL on every engine in
; debug builds: the engine harness runs it at VL 32 and 64 (seeds/kernels/narrow_sums.s is
; the byte version that runs everywhere).
;
; s6/s7: 2112005 halfwords 0x8000 through V.LH / V.LHU (-32768 / 32768 each)
; s8:    2112003 products of bytes 0x80 by themselves through V.LB (16384 each)
; s9:    2112003 products of bytes 0xff by themselves through V.LBU (65025 each)
;
; expect status halted
; expect s6 0xffffffefe2fd8000
; expect s7 0x101d028000
; expect s8 0x80e80c000
; expect s9 0x1ff9af3403

        .equ    N3, 2112005             ; 66000 * 32 + 5
        .equ    N4, 2112003             ; 66000 * 32 + 3
        .mem    0x100000, 0x1000000, r

        .data   0x100000
lows:   .fill   N4, 1, 0x80
highs:  .fill   N4, 1, 0xff
halves: .fill   N3, 2, 0x8000

        .text
        S.LI    s1, halves
        S.LI    s10, N3
        LOOP    s10
        V.LH    [s1, lc0<<1, 0], ->v1
        V.ADD   v7, v7, v1
        V.LHU   [s1, lc0<<1, 0], ->v3
        V.ADD   v8, v8, v3
        ENDLOOP
        V.REDSUM s6, v7
        V.REDSUM s7, v8
        S.LI    s1, lows
        S.LI    s11, highs
        S.LI    s10, N4
        LOOP    s10
        V.LB    [s1, lc0, 0], ->v1
        V.LB    [s1, lc0, 0], ->v3
        V.MUL   v1, v1, v3
        V.ADD   v9, v9, v1
        V.LBU   [s11, lc0, 0], ->v12
        V.LBU   [s11, lc0, 0], ->v13
        V.MUL   v12, v12, v13
        V.ADD   v10, v10, v12
        ENDLOOP
        V.REDSUM s8, v9
        V.REDSUM s9, v10
        HALT
