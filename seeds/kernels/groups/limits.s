; limits.s -- 4 groups under --max-instructions 20, which limits every group separately.
; Group g counts s3 up 4g times in a scalar loop: 4 + 16g instructions (4, 20, 36, 52).
; Group 0 halts; group 1's HALT retires as its 20th instruction, so it halts too; groups 2
; and 3 stop at the limit. Reported: group 2, the lowest at its limit, after 20 instructions:
; S.GID, S.MUL, four full iterations (16), then BEQ and S.SUB of the fifth: s2 = 8-5 = 3,
; s3 = 4, next pc 0x20 (S.ADD). Retired in all: 4 + 20 + 20 + 20 = 64.
;
; flags --max-instructions 20
; expect status limit
; expect group 2
; expect groups 2 0 2
; expect instructions 64
; expect s1 0x2
; expect s2 0x3
; expect s3 0x4

        .groups 4
        .text
        S.GID   s1                      ; 0x00
        S.MUL   s2, s1, 4               ; 0x08
top:    BEQ     s2, 0, done             ; 0x10
        S.SUB   s2, s2, 1               ; 0x18
        S.ADD   s3, s3, 1               ; 0x20
        J       top                     ; 0x28
done:   HALT                            ; 0x30
