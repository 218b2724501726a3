; transpose_tile.s -- transpose a 5 x 11 int32 matrix through tile space.
;
; Stage 1: each row of M (memory) is copied into tile space with a contiguous .local
; store (the tile then holds M row-major at tile address 0). Stage 2: for each column c,
; lane i reads tile element i*11 + c with a register-offset .local load
; V.LW.local [s4 + (v2 << 2)] and the column is written as row c of T (memory).
; .vl 4: rows take 3 iterations (4 + 4 + 3 lanes), columns 2 (4 + 1). Hardware loops do not
; nest, so the outer loops are scalar branch loops around LOOP/ENDLOOP.
;
; expect status halted
; expect s9 0xb
; expect mem 0x20000 6669840437d49c81bd0fa577c64739afe37c818d81f41b9bace5aae2afd0770a17da7d46808bb3f7ec76f9a15a8a36ebebdb71a2a15f4ef3d5ba7d66db17fded47fc0887bcdb8011f37698a5b0ff6e5e22f2da555249a48e2809914716cb4e704f81ec9c20ecc383ee9272d688012ac481042d461a969a475b7b90bf7b4efba888f5426edddff4b46432a87e10f08b88fe767aebfe17ce18828ee3a7aef7be71629db376ab2e474e8eda86dd0ca75c75f2b4a3192b6058a93444af1cb6e21ff98d40b771944ba7691cc37f000e210d7d49f329992d96d53d37649f9e
; expect tile 0x0 6669840481f41b9bec76f9a1db17fded22f2da5520ecc3835b7b90bf10f08b88629db3762b6058a91cc37f0037d49c81ace5aae25a8a36eb47fc08875249a48eee9272d67b4efba8fe767aebab2e474e3444af1c0e210d7dbd0fa577afd0770aebdb71a2bcdb80112809914788012ac488f5426efe17ce188eda86ddb6e21ff949f32999c64739af17da7d46a15f4ef3f37698a516cb4e7081042d46dddff4b4828ee3a70ca75c758d40b7712d96d53de37c818d808bb3f7d5ba7d66b0ff6e5e4f81ec9c1a969a476432a87eaef7be71f2b4a319944ba76937649f9e

        .vl     4
        .tilesize 1024
        .tileprotect 960, 64, none      ; the last granule is never touched
        .mem    0x10000, 0x1000, r
        .mem    0x20000, 0x1000, rw

        .data   0x10000
M:
        .word  0x04846966, 0x9b1bf481, 0xa1f976ec, 0xedfd17db, 0x55daf222, 0x83c3ec20, 0xbf907b5b, 0x888bf010, 0x76b39d62, 0xa958602b, 0x007fc31c
        .word  0x819cd437, 0xe2aae5ac, 0xeb368a5a, 0x8708fc47, 0x8ea44952, 0xd67292ee, 0xa8fb4e7b, 0xeb7a76fe, 0x4e472eab, 0x1caf4434, 0x7d0d210e
        .word  0x77a50fbd, 0x0a77d0af, 0xa271dbeb, 0x1180dbbc, 0x47910928, 0xc42a0188, 0x6e42f588, 0x18ce17fe, 0xdd86da8e, 0xf91fe2b6, 0x9929f349
        .word  0xaf3947c6, 0x467dda17, 0xf34e5fa1, 0xa59876f3, 0x704ecb16, 0x462d0481, 0xb4f4dfdd, 0xa7e38e82, 0x755ca70c, 0x71b7408d, 0x3dd5962d
        .word  0x8d817ce3, 0xf7b38b80, 0x667dbad5, 0x5e6effb0, 0x9cec814f, 0x479a961a, 0x7ea83264, 0x71bef7ae, 0x19a3b4f2, 0x69a74b94, 0x9e9f6437

        .data   0x20000
T:      .space  220

        .text
        S.LI    s1, M                   ; memory row pointer
        S.MOV   s2, s0                  ; tile row address
        S.LI    s3, 11                  ; C
        S.LI    s8, 5                   ; R
        S.MOV   s9, s0                  ; r = 0
rows:   LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v1
        V.SW.local v1, [s2, lc0<<2, 0]
        ENDLOOP
        S.ADD   s1, s1, 44
        S.ADD   s2, s2, 44
        S.ADD   s9, s9, 1
        BLT     s9, s8, rows

        S.MOV   s4, s0                  ; tile address of column c: 4*c
        S.LI    s5, T                   ; output row pointer
        S.MOV   s9, s0                  ; c = 0
cols:   LOOP    s8
        V.LC0   v2                      ; v2[i] = i (source row)
        V.MUL   v2, v2, 11              ; element index i*11 (+ c via s4)
        V.LW.local [s4 + (v2 << 2)], ->v3
        V.SW    v3, [s5, lc0<<2, 0]
        ENDLOOP
        S.ADD   s4, s4, 4
        S.ADD   s5, s5, 20
        S.ADD   s9, s9, 1
        BLT     s9, s3, cols
        HALT
