; saxpy.s -- single-precision y = a*x + y, a = 2.5.
;
; N = 45 floats. y (in place) gets the fused V.FMA.S result (one rounding);
; z (0x10200) gets the unfused V.FMUL.S + V.FADD.S result (two roundings). They differ
; in lanes 1, 8, 19, 31, 32, 37, 39, 44.
; Special lanes: x[7] = inf, y[7] = -inf -> canonical NaN 0x7fc00000; x[12] = nan ->
; 0x7fc00000; x[30] = inf, y[30] = 1 -> inf; x[20] is the smallest subnormal
; 2^-149 and y[20] = 0: 2.5 * 2^-149 rounds to even, 2^-148 (bits 0x00000002, no flush).
; a is passed as the f32 bit pattern of 2.5 in s4 and used as a broadcast vb operand.
;
; expect status halted
; expect mem 0x100b4 fca94142bf1f614252b8eec10000e5c17d3f11c2d8a316c1fca96dc10000c07fd67859c148e15cc1e17a3ec2713daa400000c07fd078093f4e624142a69bca41e32561c22fdde7417b943542c49faabf020000004e6271c20456f441e9a630c212830c42560e0842d1220e42bac920c2082c05425eba72420000807fc3f550c24035a2c058b94cc2d0f7cec160a582c2e55000c2a9f11a40daf91a41cff74bc06ce7ccc1000042c221b05441aec740c2a14568c2
; expect mem 0x10200 fca94142be1f614252b8eec10000e5c17d3f11c2d8a316c1fca96dc10000c07fd57859c148e15cc1e17a3ec2713daa400000c07fd078093f4e624142a69bca41e32561c22fdde7417b943542c89faabf020000004e6271c20456f441e9a630c212830c42560e0842d1220e42bac920c2082c05425eba72420000807fc2f550c23f35a2c058b94cc2d0f7cec160a582c2e55000c2a8f11a40daf91a41d0f74bc06ce7ccc1000042c221b05441aec740c2a24568c2

        .mem    0x10000, 0x1000, rw

        .data   0x10000
x:
        .float  4.75, 2.61, -1.63, -5.43, 3.18, 8.45, -1.30, inf, -8.35
        .float  0.50, -5.37, -0.10, nan, 6.41, 0.41, 6.64, -3.12, -6.69
        .float  -0.63, 3.87
        .word   0x00000001              ; x[20]: smallest subnormal f32
        .float  -8.34, -4.53, -4.42, -0.51, 6.51, -4.12
        .float  -8.17, 7.16, 6.65, inf, -8.30, -4.31, -5.82, 7.47, -6.75
        .float  -6.71, -5.03, 5.24, -5.44, 8.70, -3.45, 2.70, -5.55, -3.74
y:
        .float  36.541, 49.756, -25.765, -15.050, -44.262, -30.540, -11.604, -inf, 7.283
        .float  -15.055, -34.195, 5.570, -15.108, -15.488, 47.321, 8.726, -48.487, 45.708
        .float  46.970, -11.008, 0.0, -39.496, 41.867, -33.113, 36.403, 17.739, 45.834
        .float  -19.772, 15.393, 44.057, 1.0, -31.490, 5.706, -36.631, -44.546, -48.448
        .float  -15.304, 14.996, -3.414, 10.413, -47.363, -39.875, 6.543, -34.320, -48.718

        .data   0x10200
z:      .space  180

        .text
        S.LI    s1, x
        S.LI    s2, y
        S.LI    s6, z
        S.LI    s4, 0x40200000          ; a = 2.5f as bits
        S.LI    s3, 45
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v1   ; x (f32 in the low 32 bits)
        V.LW    [s2, lc0<<2, 0], ->v5   ; y
        V.MOV   v3, v5
        V.FMA.S v3, v1, s4              ; v3 = x * a + v3, fused
        V.FMUL.S v4, v1, s4             ; v4 = x * a (rounded)
        V.FADD.S v4, v4, v5             ; v4 = v4 + y (rounded again)
        V.SW    v3, [s2, lc0<<2, 0]     ; y = fused result
        V.SW    v4, [s6, lc0<<2, 0]     ; z = unfused result
        ENDLOOP
        HALT
