; copy32.s -- contiguous 32-bit word copy: dst[i] = src[i] for i < N.
;
; Bench kernel (lanejit bench, benches/kernels.rs). The harness rewrites the `.equ N` line
; and fills src host-side (the `--load` path); the mapping covers the largest bench size
; (64 MiB per buffer) and costs nothing for untouched pages. One element = one word.

        .equ    N, 1024                 ; element count (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC
        S.LI    s2, DST
        S.LI    s3, N
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v1
        V.SW    v1, [s2, lc0<<2, 0]
        ENDLOOP
        HALT
