; matmul256.s -- dense f32 matrix product C = A * B, N x N (N = 256 in the bench), with
; blocks of B staged in tile space: C[i][j] = sum over k of A[i][k] * B[k][j], each sum
; accumulated in k order by fused V.FMA.S from +0.0 (acc = fma(A[i][k], B[k][j], acc)).
;
; Bench kernel. The harness rewrites the `.equ N` line (N a multiple of KB = 16) and fills
; A and B host-side with finite values. The kernel first zeroes C; then for every block of
; KB rows of B (k0 = 0, 16, ...): the block (KB * N words, contiguous in B) is copied into
; tile space at 0 by one contiguous loop; then for every row i, A[i][k0..k0+16] is loaded
; as 16 broadcasts (scaled-immediate loads off a scalar base: every lane reads the same
; word) and a hardware loop over the columns j (trip N) updates C[i][j] with 16 FMAs, one
; per row of the staged block (contiguous .local loads, byte offset 4N per row). The tile
; (64 KiB) holds a block for N <= 1024. One element = one multiply-add (N^3 per run).

        .equ    N, 256                  ; dimension (rewritten by the harness)
        .equ    KB, 16                  ; rows of B per staged block
        .equ    ROWB, N + N + N + N     ; row bytes
        .equ    R1, ROWB                ; Rk: tile offset of row k of the block
        .equ    R2, R1 + ROWB
        .equ    R3, R2 + ROWB
        .equ    R4, R3 + ROWB
        .equ    R5, R4 + ROWB
        .equ    R6, R5 + ROWB
        .equ    R7, R6 + ROWB
        .equ    R8, R7 + ROWB
        .equ    R9, R8 + ROWB
        .equ    R10, R9 + ROWB
        .equ    R11, R10 + ROWB
        .equ    R12, R11 + ROWB
        .equ    R13, R12 + ROWB
        .equ    R14, R13 + ROWB
        .equ    R15, R14 + ROWB
        .equ    A, 0x10000000
        .equ    B, 0x20130440
        .equ    C, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x20000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s20, N
        S.MUL   s21, s20, s20           ; N * N
        S.MUL   s22, s20, KB            ; words per block of B
        S.SHL   s24, s22, 2             ; bytes per block of B
        S.LI    s3, C
        V.MOV   v1, 0
        LOOP    s21                     ; C = 0
        V.SW    v1, [s3, lc0<<2, 0]
        ENDLOOP
        S.LI    s6, B                   ; &B[k0][0]
        S.LI    s7, A                   ; &A[0][k0]
        S.MOV   s5, s0                  ; k0
kblk:   LOOP    s22                     ; stage B[k0 .. k0+KB][*] at tile 0
        V.LW    [s6, lc0<<2, 0], ->v1
        V.SW.local v1, [s0, lc0<<2, 0]
        ENDLOOP
        S.MOV   s9, s7                  ; &A[i][k0]
        S.LI    s10, C                  ; &C[i][0]
        S.MOV   s8, s0                  ; i
irow:
        V.LWI   [s9 + (0 << 2)], ->v16
        V.LWI   [s9 + (1 << 2)], ->v17
        V.LWI   [s9 + (2 << 2)], ->v18
        V.LWI   [s9 + (3 << 2)], ->v19
        V.LWI   [s9 + (4 << 2)], ->v20
        V.LWI   [s9 + (5 << 2)], ->v21
        V.LWI   [s9 + (6 << 2)], ->v22
        V.LWI   [s9 + (7 << 2)], ->v23
        V.LWI   [s9 + (8 << 2)], ->v24
        V.LWI   [s9 + (9 << 2)], ->v25
        V.LWI   [s9 + (10 << 2)], ->v26
        V.LWI   [s9 + (11 << 2)], ->v27
        V.LWI   [s9 + (12 << 2)], ->v28
        V.LWI   [s9 + (13 << 2)], ->v29
        V.LWI   [s9 + (14 << 2)], ->v30
        V.LWI   [s9 + (15 << 2)], ->v31
        LOOP    s20                     ; columns j
        V.LW    [s10, lc0<<2, 0], ->v1  ; C[i][j]
        V.LW.local [s0, lc0<<2, 0], ->v2
        V.FMA.S v1, v2, v16
        V.LW.local [s0, lc0<<2, R1], ->v2
        V.FMA.S v1, v2, v17
        V.LW.local [s0, lc0<<2, R2], ->v2
        V.FMA.S v1, v2, v18
        V.LW.local [s0, lc0<<2, R3], ->v2
        V.FMA.S v1, v2, v19
        V.LW.local [s0, lc0<<2, R4], ->v2
        V.FMA.S v1, v2, v20
        V.LW.local [s0, lc0<<2, R5], ->v2
        V.FMA.S v1, v2, v21
        V.LW.local [s0, lc0<<2, R6], ->v2
        V.FMA.S v1, v2, v22
        V.LW.local [s0, lc0<<2, R7], ->v2
        V.FMA.S v1, v2, v23
        V.LW.local [s0, lc0<<2, R8], ->v2
        V.FMA.S v1, v2, v24
        V.LW.local [s0, lc0<<2, R9], ->v2
        V.FMA.S v1, v2, v25
        V.LW.local [s0, lc0<<2, R10], ->v2
        V.FMA.S v1, v2, v26
        V.LW.local [s0, lc0<<2, R11], ->v2
        V.FMA.S v1, v2, v27
        V.LW.local [s0, lc0<<2, R12], ->v2
        V.FMA.S v1, v2, v28
        V.LW.local [s0, lc0<<2, R13], ->v2
        V.FMA.S v1, v2, v29
        V.LW.local [s0, lc0<<2, R14], ->v2
        V.FMA.S v1, v2, v30
        V.LW.local [s0, lc0<<2, R15], ->v2
        V.FMA.S v1, v2, v31
        V.SW    v1, [s10, lc0<<2, 0]
        ENDLOOP
        S.ADD   s9, s9, ROWB
        S.ADD   s10, s10, ROWB
        S.ADD   s8, s8, 1
        BLT     s8, s20, irow
        S.ADD   s6, s6, s24
        S.ADD   s7, s7, KB + KB + KB + KB
        S.ADD   s5, s5, KB
        BLT     s5, s20, kblk
        HALT
