; spmv_csr.s -- sparse matrix times vector, CSR, f32: y[r] = sum of val[j] * x[col[j]] over
; j = rowptr[r] .. rowptr[r+1]-1, for the N rows r < N, one row per lane.
;
; Bench kernel. The harness rewrites the `.equ N` line (rows) and fills the CSR arrays
; host-side: rowptr (N + 1 words), col and val (rowptr[N] entries, then K padding entries
; with col 0 and val 0), x (N floats, finite); every row holds 8 to K = 16 nonzeros at
; random columns. Lane r walks its own row: j starts at rowptr[r] and every step gathers
; col[j], val[j] and x[col[j]] and does one fused V.FMA.S. The group steps K times, the most
; any row holds; past its row's end a lane's val is forced to +0.0 (the sign of j - end as
; an all-ones / zero mask), which leaves its sum unchanged bit for bit, so the sums are
; exactly those of the plain CSR loop acc = fma(val[j], x[col[j]], acc) from +0.0.
; One element = one nonzero.

        .equ    N, 256                  ; rows (rewritten by the harness)
        .equ    K, 16                   ; most nonzeros in a row
        .equ    VAL, 0x10000000
        .equ    COL, 0x20130440
        .equ    Y, 0x30260880
        .equ    ROWPTR, 0x40390cc0
        .equ    X, 0x504c0220
        .mem    0x10000000, 0x4400000, rw
        .mem    0x20000000, 0x4400000, rw
        .mem    0x30000000, 0x4400000, rw
        .mem    0x40000000, 0x4400000, rw
        .mem    0x50000000, 0x4400000, rw

        .text
        S.LI    s1, ROWPTR
        S.LI    s2, COL
        S.LI    s4, VAL
        S.LI    s5, X
        S.LI    s6, Y
        S.LI    s3, N
        LOOP    s3
        V.LWU   [s1, lc0<<2, 0], ->v1   ; j = rowptr[r]
        V.LWU   [s1, lc0<<2, 4], ->v2   ; end = rowptr[r + 1]
        V.MOV   v10, 0                  ; acc = +0.0
        S.MOV   s7, s0                  ; step
nz:     V.SUB   v3, v1, v2
        V.SRA   v3, v3, 63              ; all ones while j < end, else 0
        V.LWU   [s2 + (v1 << 2)], ->v4  ; col[j]
        V.LW    [s4 + (v1 << 2)], ->v5  ; val[j]
        V.AND   v5, v5, v3              ; +0.0 past the row's end
        V.LW    [s5 + (v4 << 2)], ->v6  ; x[col[j]]
        V.FMA.S v10, v5, v6
        V.ADD   v1, v1, 1
        S.ADD   s7, s7, 1
        BLT     s7, K, nz
        V.SW    v10, [s6, lc0<<2, 0]
        ENDLOOP
        HALT
