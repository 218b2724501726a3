; tiny_g.s -- the smallest useful group: it writes its id into its own dword. Launched as
; 10^6 groups it measures the launch overhead per group.

        .mem    0x10000000, 0x800000, rw

        .text
        S.GID   s1
        S.SHL   s2, s1, 3
        S.ADD   s2, s2, 0x10000000
        V.SDI   s1, [s2]
        HALT
