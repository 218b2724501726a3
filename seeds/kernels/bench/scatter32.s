; scatter32.s -- dst[idx[i]] = src[i] for i < N, through the same permutation as gather32.
;
; Bench kernel. A register-offset store without .U adds the width shift: (v2 << 2) is
; shamt 0. One element = one scattered word.

        .equ    N, 1024                 ; element count (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    IDX, 0x20130440
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x20000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, IDX
        S.LI    s2, SRC
        S.LI    s4, DST
        S.LI    s3, N
        LOOP    s3
        V.LWU   [s1, lc0<<2, 0], ->v2   ; idx[i]
        V.LW    [s2, lc0<<2, 0], ->v3   ; src[i]
        V.SW    v3, [s4 + (v2 << 2)]    ; dst[idx[i]]
        ENDLOOP
        HALT
