; stencil.s -- unaligned 3-point stencils with unscaled (.U) immediate loads.
;
; p is 47 int32 at the odd address 0x10001; out[i] = p[i] + 2*p[i+1] + p[i+2], i < 45.
; Lane addresses v1 = &p[i+1] are built with V.LC0/V.SHL/V.ADD, and the three taps are
; V.LWI.U [v1 - 4], [v1 + 0], [v1 + 4]: byte offsets, any alignment.
; q is 31 int16 at 0x10101; out2[i] = q[i] - q[i+2] (i < 29) via V.LHI.U, which
; sign-extends (.U only drops the scaling), stored as 64-bit values. s8 sums q[1..29]
; zero-extended by V.LHUI.U (q[1] = -1 contributes 65535). Every access that is
; misaligned uses a .U form, so the kernel gives the same result under --strict-align.
;
; expect status halted
; expect s5 0x1abdbd
; expect s8 0xffcf3
; expect mem 0x20000 7d930100580b02003ba701003a5101008293fffff7f90000eec7040065f80300da3c0000af33ffffa0590000bb520000f1f0ffff5faa01008dcb0100c7ebfdffffcafbff5f5cfcffd351feff96d302002d35040042eefffff0f4fdff371fffff0870ffff64eaffff7a0900003dfdffff016b00008b0202007977010072b9ffff9bfd010065600300187c00004e5cfcfffa89fcffc1640100a49e020033960000184c0200bb060300e0fb00000974010074c80000
; expect mem 0x20100 8780000000000000233000000000000095b1ffffffffffffdc180000000000002b71000000000000af8fffffffffffffe281ffffffffffff2e7b000000000000748c0000000000001b53ffffffffffff66e3ffffffffffffba2a00000000000058600000000000009aceffffffffffff8b0cffffffffffff25bd000000000000e107000000000000c0daffffffffffff8a7a0000000000005f10000000000000cf09000000000000de98ffffffffffff97beffffffffffffde2a0000000000000aeaffffffffffff86b7ffffffffffffd21c000000000000f7daffffffffffffb2aaffffffffffff

        .mem    0x10000, 0x1000, r
        .mem    0x20000, 0x1000, rw

        .data   0x10001
p:
        .word  -4480, 18695, 70383, -25485, 88934, -66053, 15398, 99248
        .word  99432, -37915, -8024, 1658, 27652, -35783, 40059, 64816
        .word  -52046, -96973, -29721, -82082, 83760, 99800, -7603, -89136
        .word  51971, -72351, 55875, -44931, 36413, -28602, 48184, 63957
        .word  -79977, 77935, 54566, 34218, -91234, -90264, 44940, 91713
        .word  -56682, 60102, 87030, -35831, 49112, 32848, -63492
        .data   0x10101
q:
        .half  30836, -1, -2067, -12324, 18008, -18688, -10963, 10065, 21323, -21469
        .half  -14633, 22792, -7311, 11854, -31975, 24500, 30350, -23921, 28333, -14385
        .half  -3037, -18576, -5548, 7826, 11197, -3148, 16819, 15406, 9441, 24887
        .half  31279

        .data   0x20000
out:    .space  180
        .data   0x20100
out2:   .space  232

        .text
        S.LI    s1, p + 4               ; &p[1] = 0x10005
        S.LI    s2, out
        S.LI    s3, 45
        LOOP    s3
        V.LC0   v1
        V.SHL   v1, v1, 2
        V.ADD   v1, v1, s1              ; v1[i] = &p[i+1]
        V.LWI.U [v1 - 4], ->v2          ; p[i]
        V.LWI.U [v1 + 0], ->v3          ; p[i+1]
        V.LWI.U [v1 + 4], ->v4          ; p[i+2]
        V.SHL   v3, v3, 1
        V.ADD   v2, v2, v3
        V.ADD   v2, v2, v4
        V.SW    v2, [s2, lc0<<2, 0]     ; low 32 bits
        V.ADD   v9, v9, v2
        ENDLOOP

        S.LI    s6, q + 2               ; &q[1] = 0x10103
        S.LI    s7, out2
        S.LI    s3, 29
        LOOP    s3
        V.LC0   v5
        V.SHL   v5, v5, 1
        V.ADD   v5, v5, s6              ; v5[i] = &q[i+1]
        V.LHI.U [v5 - 2], ->v6          ; q[i], sign-extended
        V.LHI.U [v5 + 2], ->v7          ; q[i+2], sign-extended
        V.SUB   v6, v6, v7
        V.SD    v6, [s7, lc0<<3, 0]
        V.LHUI.U [v5 + 0], ->v8         ; q[i+1], zero-extended
        V.ADD   v10, v10, v8
        ENDLOOP
        V.REDSUM s5, v9
        V.REDSUM s8, v10
        HALT
