; saxpy32.s -- y[i] = a * x[i] + y[i] in f32 for i < N (unfused: V.FMUL.S then V.FADD.S).
;
; Bench kernel. x at SRC, y (in place) at DST, a = 1.5 passed as its f32 bit pattern in s4
; and used as a broadcast vb operand. The harness fills x and y with finite values, so no
; NaN arises and the result is bit-identical to the plain Rust loop `y = a * x + y`.
; One element = one y.

        .equ    N, 1024                 ; element count (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC
        S.LI    s2, DST
        S.LI    s4, 0x3fc00000          ; a = 1.5f as bits
        S.LI    s3, N
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v1   ; x
        V.LW    [s2, lc0<<2, 0], ->v2   ; y
        V.FMUL.S v1, v1, s4             ; a * x (rounded)
        V.FADD.S v2, v1, v2             ; + y (rounded)
        V.SW    v2, [s2, lc0<<2, 0]
        ENDLOOP
        HALT
