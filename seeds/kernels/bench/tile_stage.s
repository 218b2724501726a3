; tile_stage.s -- transpose an N x N int32 matrix through tile space: T[c][r] = M[r][c].
;
; Bench kernel. The matrix is processed in bands of VL rows. Stage 1 copies each row of the
; band into tile space with a contiguous .local store (the tile holds the band row-major at
; tile address 0). Stage 2 walks the columns: lane l reads tile element l*N + c with a
; register-offset .local load and the column is stored as VL consecutive words of row c of T.
; N must be a multiple of VL; the band (VL * N * 4 bytes) must fit the tile (1 MiB here:
; N <= 4096 at VL 64). One element = one matrix word (it moves twice: in and out).

        .equ    N, 64                   ; matrix dimension (rewritten by the harness)
        .equ    SRC, 0x10000000
        .equ    DST, 0x30260880
        .tilesize 0x100000
        .mem    0x10000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw

        .text
        S.LI    s1, SRC                 ; memory row pointer (walks all of M)
        S.LI    s5, DST                 ; T
        S.LI    s3, N
        S.VL    s7                      ; rows per band
        S.SHL   s12, s3, 2              ; row bytes = 4N
        V.LANEID v1                     ; l
        V.MUL   v2, v1, s12             ; tile byte offset of band row l
        S.MOV   s13, s0                 ; r0 = first row of the band
band:   S.MOV   s2, s0                  ; tile row address
        S.MOV   s9, s0                  ; r = 0
rows:   LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v3
        V.SW.local v3, [s2, lc0<<2, 0]
        ENDLOOP
        S.ADD   s1, s1, s12
        S.ADD   s2, s2, s12
        S.ADD   s9, s9, 1
        BLT     s9, s7, rows
        S.MOV   s4, s0                  ; tile address of column c: 4c
        S.SHL   s6, s13, 2
        S.ADD   s6, s6, s5              ; &T[0][r0]
        S.MOV   s9, s0                  ; c = 0
cols:   V.LW.local [s4 + v2], ->v4      ; lane l: band[l][c]
        V.SW    v4, [s6 + (v1 << 2)]    ; T[c][r0 + l]
        S.ADD   s4, s4, 4
        S.ADD   s6, s6, s12             ; next row of T
        S.ADD   s9, s9, 1
        BLT     s9, s3, cols
        S.ADD   s13, s13, s7
        BLT     s13, s3, band
        HALT
