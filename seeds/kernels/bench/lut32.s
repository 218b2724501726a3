; lut32.s -- lookup-table transform: dst[i] = lut[src[i] >> 12] for i < N, through a
; 4 MiB table of 2^20 words.
;
; Bench kernel. The harness rewrites the `.equ N` line and fills src (random words) and
; the whole table (random words: every page of it holds data) host-side. The lookup is a
; register-offset gather with shamt 2 (loads add no width shift). One element = one word.

        .equ    N, 1024                 ; element count (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    LUT, 0x20130440
        .equ    DST, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x20000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC
        S.LI    s2, LUT
        S.LI    s4, DST
        S.LI    s3, N
        LOOP    s3
        V.LWU   [s1, lc0<<2, 0], ->v1   ; src[i]
        V.SHR   v1, v1, 12              ; table index, 0 .. 2^20 - 1
        V.LW    [s2 + (v1 << 2)], ->v2  ; lut[index]
        V.SW    v2, [s4, lc0<<2, 0]
        ENDLOOP
        HALT
