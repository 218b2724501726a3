; gather.s -- out[i] = table[idx[i]] through a permutation.
;
; N = 50. The indices are loaded contiguously; the gather is a register-offset load
; V.LW [s2 + (v2 << 2)]: loads never add the width shift, so the element scaling is
; written as shamt 2. A second gather uses precomputed byte offsets (shamt 0) and V.LWU.
; s5 = sum of the gathered words sign-extended, s6 = zero-extended (both wrapping).
;
; expect status halted
; expect s5 0xfffffffdc32dc54a
; expect s6 0x17c32dc54a
; expect mem 0x20000 7aebea957ceef001036813fe0572d82d613344973474648e39aac498831bf2bfc33e80ae950dd5007bfdebf6d77bf2aa2465e07aec3d5e44829703e4a03573eed0d93388a7accc30976903e43fb2072f8b472e55ebb18c68418b76057b818e84058af64681f86018616ac58b1962f4a78557be0b07e3eae133dc8e81cee262165c0d371747112b24d2f061655631c4ea15e89e193ac9e5d7c4055c4dd836d6a8175af4565f730fbbd16ee7218040a0be0ce7ec17704a9da99d7ff6d0380a2aef7cf24a22c923e567

        .mem    0x10000, 0x1000, r
        .mem    0x20000, 0x1000, rw

        .data   0x10000
idx:
        .word  26, 23, 27, 24, 49, 41, 8, 28, 7, 4
        .word  13, 18, 20, 40, 3, 1, 22, 31, 47, 30
        .word  10, 38, 15, 5, 43, 9, 48, 17, 42, 16
        .word  34, 0, 21, 32, 12, 33, 14, 19, 37, 25
        .word  44, 35, 36, 39, 6, 29, 46, 45, 11, 2
table:
        .word  0x1662e2ce, 0xee7335a0, 0x67e523c9, 0xe4039782, 0x00d50d95, 0x848e817b
        .word  0x17ece70c, 0xae803ec3, 0x98c4aa39, 0x1860f881, 0x552e478b, 0x224af27c
        .word  0x6561f0d2, 0xf6ebfd7b, 0x199ee815, 0x05768b41, 0xe1eae307, 0xa7f46219
        .word  0xaaf27bd7, 0xd7e5c93a, 0x7ae06524, 0x17370d5c, 0x8833d9d0, 0x01f0ee7c
        .word  0x2dd87205, 0xa8d636d8, 0x95eaeb7a, 0xfe136803, 0xbff21b83, 0xa99d4a70
        .word  0x2f07b23f, 0x30ccaca7, 0x242b1147, 0xeac43156, 0x818edc33, 0xbb0f735f
        .word  0x21e76ed1, 0x4d5c05c4, 0x688cb1eb, 0xbea04080, 0x445e3dec, 0x8e647434
        .word  0x0bbe5785, 0x46f68a05, 0x56f45a17, 0xef2a0a38, 0xd0f67f9d, 0xe4036997
        .word  0x8bc56a61, 0x97443361

        .data   0x20000
out:    .space  200

        .text
        S.LI    s1, idx
        S.LI    s2, table
        S.LI    s4, out
        S.LI    s3, 50
        LOOP    s3
        V.LW    [s1, lc0<<2, 0], ->v2   ; v2[i] = idx[LC0BASE + i]
        V.LW    [s2 + (v2 << 2)], ->v3  ; v3[i] = table[v2[i]]  (EA = s2 + (v2 << 2))
        V.SW    v3, [s4, lc0<<2, 0]
        V.ADD   v5, v5, v3
        V.SHL   v6, v2, 2               ; byte offsets
        V.LWU   [s2 + v6], ->v7         ; same elements, zero-extended
        V.ADD   v8, v8, v7
        ENDLOOP
        V.REDSUM s5, v5
        V.REDSUM s6, v8
        HALT
