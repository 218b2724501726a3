; slices.s -- 4 groups each copy their own 64-element slices of a source array to a
; destination, adding 0x01 to every byte, at every element width: words (V.LW/V.SW),
; halfwords, bytes and doublewords, through contiguous accesses with every lane active (the
; group's bytes move at once, also when groups run on several threads). Every source byte
; is 0xa1, so every destination byte is 0xa2: a byte left unwritten keeps 0x00.
; Race-free: group g touches only its own slices.
;
; expect status halted
; expect groups 4 0 0
; expect mem 0x20000 a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2
; expect mem 0x203f0 a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2
; expect mem 0x205f0 a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2
; expect mem 0x206f0 a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2
; expect mem 0x217f0 a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2

        .groups 4
        .mem    0x10000, 0x2000, r
        .mem    0x20000, 0x2000, rw
        .data   0x10000
src:    .fill   2048, 4, 0xa1a1a1a1
        .equ    DST, 0x20000
        .text
        S.GID   s1
        S.LI    s4, 64
        S.SHL   s3, s1, 8               ; words: 256 bytes per group
        S.LI    s2, src
        S.ADD   s2, s2, s3
        S.LI    s5, DST
        S.ADD   s5, s5, s3
        LOOP    s4
        V.LW    [s2, lc0<<2, 0], ->v1
        V.ADD   v1, v1, 0x01010101
        V.SW    v1, [s5, lc0<<2, 0]
        ENDLOOP
        S.SHL   s3, s1, 7               ; halfwords: 128 bytes per group, after the words
        S.LI    s5, DST + 0x400
        S.ADD   s5, s5, s3
        LOOP    s4
        V.LH    [s2, lc0<<1, 0], ->v1
        V.ADD   v1, v1, 0x0101
        V.SH    v1, [s5, lc0<<1, 0]
        ENDLOOP
        S.SHL   s3, s1, 6               ; bytes: 64 bytes per group
        S.LI    s5, DST + 0x600
        S.ADD   s5, s5, s3
        LOOP    s4
        V.LB    [s2, lc0, 0], ->v1
        V.ADD   v1, v1, 0x01
        V.SB    v1, [s5, lc0, 0]
        ENDLOOP
        S.LI    s6, 0x0101010101010101
        S.SHL   s3, s1, 9               ; doublewords: 512 bytes per group
        S.LI    s5, DST + 0x1000
        S.ADD   s5, s5, s3
        LOOP    s4
        V.LD    [s2, lc0<<3, 0], ->v1
        V.ADD   v1, v1, s6
        V.SD    v1, [s5, lc0<<3, 0]
        ENDLOOP
        HALT
