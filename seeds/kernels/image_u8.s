; image_u8.s -- u8 image kernels a JIT computes on narrow lanes: a 3x3 box blur (nine bytes
; summed, times 7282, shifted right by 16, stored as a byte) and a Sobel magnitude (byte
; differences, |gx| + |gy| by the sign-mask XOR, an arithmetic shift right by 3, a byte
; store), over the interior of an 80 x 10 image the kernel makes itself (a hash of each
; pixel's index); each output summed by V.REDSUM. Rows of 78 interior pixels: a masked last
; group at every VL above 2.
;
; expect status halted
; expect s5 0x14159
; expect s6 0x79aa
; expect mem 0x20050 006485858c8c727683896a4646607c98a1a9aaa49c9390767259524e596b718a94aa938f698e7a765d7b81838a98757e728571857a798c987a7988aaa686805a7284999eab9e9c79859b8f8d5d644d00
; expect mem 0x30280 00290f45455a2d18564c4e153b232c5f3b2a1739501842391d30290a16151c2b322e733f2b193227364833225b404d07303118125a1e4f0e0f1a2048344a0444456926541a161e45816c253c2b031900

        .equ    W, 80
        .equ    H, 10
        .mem    0x10000, 0x1000, rw     ; the image
        .mem    0x20000, 0x1000, rw     ; its blur
        .mem    0x30000, 0x1000, rw     ; its Sobel magnitude

        .text
        S.LI    s1, 0x10000
        S.LI    s3, 800               ; W * H
        LOOP    s3
        V.LC0   v0
        V.MUL   v0, v0, 0x2545f491
        V.SHR   v1, v0, 17
        V.XOR   v0, v0, v1
        V.MUL   v0, v0, 0x1e3779b1
        V.SHR   v0, v0, 23
        V.SB    v0, [s1, lc0, 0]
        ENDLOOP

        S.LI    s10, 0x10000 + W + 1    ; the first interior pixel of each image
        S.LI    s11, 0x20000 + W + 1
        S.LI    s12, 0x30000 + W + 1
        S.LI    s20, H - 2
        S.LI    s21, W - 2
row:    LOOP    s21
        V.LBU   [s10, lc0, -81], ->v1   ; p00 p01 p02
        V.LBU   [s10, lc0, -80], ->v2
        V.LBU   [s10, lc0, -79], ->v3
        V.LBU   [s10, lc0, -1], ->v4    ; p10 p11 p12
        V.LBU   [s10, lc0, 0], ->v5
        V.LBU   [s10, lc0, 1], ->v6
        V.LBU   [s10, lc0, 79], ->v7    ; p20 p21 p22
        V.LBU   [s10, lc0, 80], ->v8
        V.LBU   [s10, lc0, 81], ->v9
        V.ADD   v10, v1, v2             ; blur: the nine summed (at most 2295)
        V.ADD   v10, v10, v3
        V.ADD   v10, v10, v4
        V.ADD   v10, v10, v5
        V.ADD   v10, v10, v6
        V.ADD   v10, v10, v7
        V.ADD   v10, v10, v8
        V.ADD   v10, v10, v9
        V.MUL   v10, v10, 7282          ; / 9, about
        V.SHR   v10, v10, 16
        V.SB    v10, [s11, lc0, 0]
        V.SUB   v11, v3, v1             ; gx = (p02 - p00) + 2 (p12 - p10) + (p22 - p20)
        V.SUB   v12, v6, v4
        V.SHL   v12, v12, 1
        V.ADD   v11, v11, v12
        V.SUB   v12, v9, v7
        V.ADD   v11, v11, v12
        V.SUB   v13, v7, v1             ; gy = (p20 - p00) + 2 (p21 - p01) + (p22 - p02)
        V.SUB   v12, v8, v2
        V.SHL   v12, v12, 1
        V.ADD   v13, v13, v12
        V.SUB   v12, v9, v3
        V.ADD   v13, v13, v12
        V.SRA   v12, v11, 63            ; |gx|
        V.XOR   v11, v11, v12
        V.SUB   v11, v11, v12
        V.SRA   v12, v13, 63            ; |gy|
        V.XOR   v13, v13, v12
        V.SUB   v13, v13, v12
        V.ADD   v11, v11, v13
        V.SRA   v11, v11, 3
        V.SB    v11, [s12, lc0, 0]
        ENDLOOP
        S.ADD   s10, s10, W
        S.ADD   s11, s11, W
        S.ADD   s12, s12, W
        S.SUB   s20, s20, 1
        BNE     s20, s0, row

        S.LI    s1, 0x20000             ; the sums of both outputs' bytes
        S.LI    s2, 0x30000
        LOOP    s3
        V.LBU   [s1, lc0, 0], ->v20
        V.ADD   v21, v21, v20
        V.LBU   [s2, lc0, 0], ->v20
        V.ADD   v22, v22, v20
        ENDLOOP
        V.REDSUM s5, v21
        V.REDSUM s6, v22
        HALT
