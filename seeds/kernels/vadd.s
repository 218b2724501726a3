; vadd.s -- your first kernel: out[i] = a[i] + b[i] * scale over N floats (f32): 2.5 i + 1.5.
;
; N is an .equ, so `lanejit run vadd.s --set N=5` runs it on fewer elements; scale is a
; float literal. The loop runs ceil(N / VL) times; the last trip masks off the lanes past N.
;
; expect status halted
; expect mem out:f32 1.5 4 6.5 9 11.5 14 16.5 19
; expect mem out+32:f32 21.5 24
; expect s3 10
; bench: elements=N

        .equ    N, 10
        .mem    0x10000, 0x1000, rw

        .data   0x10000
a:      .float  0, 1, 2, 3, 4, 5, 6, 7, 8, 9
b:      .float  1, 2, 3, 4, 5, 6, 7, 8, 9, 10
out:    .space  40

        .text
        S.LI    s1, a
        S.LI    s2, b
        S.LI    s4, out
        S.LI    s5, f32(1.5)            ; scale
        S.LI    s3, N
        LOOP    s3
body:   V.LW    [s1, lc0<<2], ->v1      ; a[i]
        V.LW    [s2, lc0<<2], ->v2      ; b[i]
        V.FMA.S v1, v2, s5              ; v1 = b[i] * scale + a[i], fused
        V.SW    v1, [s4, lc0<<2]        ; out[i]
        ENDLOOP
        HALT
