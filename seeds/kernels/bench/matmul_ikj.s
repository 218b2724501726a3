; matmul_ikj.s -- dense f32 matrix product C = A * B, N x N (N = 256 in the bench), in the
; i-k-j order a compiler emits for the plain triple loop once it interchanges j innermost,
; straight from memory (no staging): for every row i and every k, A[i][k] is broadcast
; and a hardware loop over the columns j (trip N) does C[i][j] = fma(A[i][k], B[k][j],
; C[i][j]). Each C[i][j] is so accumulated in k order by fused V.FMA.S from +0.0, as in
; matmul256.s and the native reference (the same i-k-j loop in Rust).
;
; Bench kernel. The harness rewrites the `.equ N` line and fills A and B host-side with
; finite values. The kernel first zeroes C. Its hot loop is short (N / VL iterations per
; entry, 8 at N = 256 and VL 32) and entered N * N times, once per (i, k): what it
; measures beyond matmul256 is the cost of entering an inner loop. One element = one
; multiply-add (N^3 per run).

        .equ    N, 256                  ; dimension (rewritten by the harness)
        .equ    ROWB, N + N + N + N     ; row bytes
        .equ    A, 0x10000000
        .equ    B, 0x20130440
        .equ    C, 0x30260880
        .mem    0x10000000, 0x4400000, rw
        .mem    0x20000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s20, N
        S.MUL   s21, s20, s20           ; N * N
        S.LI    s3, C
        V.MOV   v1, 0
        LOOP    s21                     ; C = 0
        V.SW    v1, [s3, lc0<<2, 0]
        ENDLOOP
        S.LI    s1, A                   ; &A[i][0]
        S.MOV   s8, s0                  ; i
irow:   S.LI    s2, B                   ; &B[k][0]
        S.MOV   s11, s1                 ; &A[i][k]
        S.MOV   s9, s0                  ; k
kcol:   V.LWI   [s11 + 0], ->v1         ; A[i][k] in every lane
        LOOP    s20                     ; columns j
        V.LW    [s3, lc0<<2, 0], ->v2   ; C[i][j]
        V.LW    [s2, lc0<<2, 0], ->v3   ; B[k][j]
        V.FMA.S v2, v1, v3
        V.SW    v2, [s3, lc0<<2, 0]
        ENDLOOP
        S.ADD   s2, s2, ROWB
        S.ADD   s11, s11, 4
        S.ADD   s9, s9, 1
        BLT     s9, s20, kcol
        S.ADD   s1, s1, ROWB
        S.ADD   s3, s3, ROWB
        S.ADD   s8, s8, 1
        BLT     s8, s20, irow
        HALT
