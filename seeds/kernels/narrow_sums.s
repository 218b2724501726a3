; narrow_sums.s -- per-lane sums of bytes at the edges of their range, long enough that a
; JIT keeping partial sums in narrow lanes (i16 for bytes) must fold them into the 64-bit
; lanes several times on the way: 600 iterations at VL 32, ending in a masked tail. Every
; lane adds the most negative or the most positive value each iteration, so a fold one
; iteration late overflows. seeds/kernels/long/narrow_sums_wide.s does the same for i32
; partial sums (halfwords, byte products).
;
; s2/s3: 19207 bytes 0x80 through V.LB / V.LBU (-128 / 128 each)
; s4/s5: 19207 bytes 0xff through V.LBU / V.LB (255 / -1 each)
;
; expect status halted
; expect s2 0xffffffffffda7c80
; expect s3 0x258380
; expect s4 0x4abbf9
; expect s5 0xffffffffffffb4f9

        .equ    N1, 19207               ; 600 * 32 + 7
        .mem    0x100000, 0x10000, r

        .data   0x100000
lows:   .fill   N1, 1, 0x80
highs:  .fill   N1, 1, 0xff

        .text
        S.LI    s1, lows
        S.LI    s10, N1
        LOOP    s10
        V.LB    [s1, lc0, 0], ->v1
        V.ADD   v2, v2, v1
        V.LBU   [s1, lc0, 0], ->v3
        V.ADD   v4, v4, v3
        ENDLOOP
        V.REDSUM s2, v2
        V.REDSUM s3, v4
        S.LI    s1, highs
        LOOP    s10
        V.LBU   [s1, lc0, 0], ->v1
        V.ADD   v5, v5, v1
        V.LB    [s1, lc0, 0], ->v3
        V.ADD   v6, v6, v3
        ENDLOOP
        V.REDSUM s4, v5
        V.REDSUM s5, v6
        HALT
