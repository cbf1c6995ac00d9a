00000000000008e0 <lpc_pread>:
 8e0:	push   %r15
 8e2:	push   %r14
 8e4:	push   %r13
 8e6:	mov    %rsi,%r13
 8e9:	push   %r12
 8eb:	mov    %rdx,%r12
 8ee:	push   %rbp
 8ef:	mov    %rcx,%rbp
 8f2:	push   %rbx
 8f3:	mov    %rdi,%rbx
 8f6:	sub    $0x18,%rsp
 8fa:	test   %rdi,%rdi
 8fd:	je     ba0 <lpc_pread+0x2c0>
 903:	test   %rsi,%rsi
 906:	je     ba0 <lpc_pread+0x2c0>
 90c:	mov    0x0(%rip),%rax        # 913 <lpc_pread+0x33>
 913:	mov    0x10(%rdi),%rdi
 917:	cmp    %rdi,%fs:(%rax)
 91b:	jne    ba0 <lpc_pread+0x2c0>
 921:	mov    (%rbx),%rax
 924:	lea    -0x1(%r12),%rsi
 929:	mov    0x1e0(%rax),%rax
 930:	lea    -0x1(%rax),%rdx
 934:	and    %rcx,%rdx
 937:	mov    0x140(%rbx),%rcx
 93e:	sub    %rdx,%rax
 941:	cmp    %rax,%rsi
 944:	jae    ba0 <lpc_pread+0x2c0>
 94a:	cmp    %rcx,%rbp
 94d:	jae    ba0 <lpc_pread+0x2c0>
 953:	sub    %rbp,%rcx
 956:	cmp    %r12,%rcx
 959:	jb     ba0 <lpc_pread+0x2c0>
 95f:	mov    0x0(%rip),%r14        # 966 <lpc_pread+0x86>
 966:	mov    %fs:(%r14),%rax
 96a:	test   %eax,%eax
 96c:	jne    bf8 <lpc_pread+0x318>
 972:	mov    0x0(%rip),%rax        # 979 <lpc_pread+0x99>
 979:	mov    (%rax),%rax
 97c:	mov    %rax,%fs:(%r14)
 980:	mov    0x0(%rip),%rax        # 987 <lpc_pread+0xa7>
 987:	mov    (%rax),%r15d
 98a:	test   %r15d,%r15d
 98d:	je     bc8 <lpc_pread+0x2e8>
 993:	mov    0x34(%rbx),%ecx
 996:	mov    0x18(%rbx),%rax
 99a:	mov    %rbp,%rsi
 99d:	shr    %cl,%rsi
 9a0:	test   %rax,%rax
 9a3:	je     b50 <lpc_pread+0x270>
 9a9:	movzbl 0x200(%rax),%ecx
 9b0:	mov    %rsi,%rdi
 9b3:	shr    %cl,%rdi
 9b6:	cmp    $0x3f,%rdi
 9ba:	ja     b50 <lpc_pread+0x270>
 9c0:	cmp    $0xb,%ecx
 9c3:	ja     b30 <lpc_pread+0x250>
 9c9:	test   %ecx,%ecx
 9cb:	je     9e4 <lpc_pread+0x104>
 9cd:	mov    %rsi,%rcx
 9d0:	shr    $0x6,%rcx
 9d4:	and    $0x3f,%ecx
 9d7:	mov    (%rax,%rcx,8),%rax
 9db:	test   %rax,%rax
 9de:	je     b50 <lpc_pread+0x270>
 9e4:	mov    %rsi,%rcx
 9e7:	and    $0x3f,%ecx
 9ea:	lea    (%rax,%rcx,8),%r10
 9ee:	mov    (%r10),%r15
 9f1:	test   %r15,%r15
 9f4:	je     b50 <lpc_pread+0x270>
 9fa:	mov    0x8(%r15),%r9d
 9fe:	mov    0x4(%r15),%eax
 a02:	test   $0x1,%r9b
 a06:	jne    b50 <lpc_pread+0x270>
 a0c:	and    $0x404,%eax
 a11:	cmp    $0x4,%eax
 a14:	jne    b50 <lpc_pread+0x270>
 a1a:	mov    0x18(%r15),%rax
 a1e:	cmp    %rax,%rbx
 a21:	jne    b50 <lpc_pread+0x270>
 a27:	mov    0x20(%r15),%rax
 a2b:	cmp    %rax,%rsi
 a2e:	jne    b50 <lpc_pread+0x270>
 a34:	mov    0x10(%r15),%rax
 a38:	mov    0xc(%r15),%esi
 a3c:	mov    0x1dc(%rax),%ecx
 a42:	shl    %cl,%rsi
 a45:	add    %rdx,%rsi
 a48:	add    0x1d0(%rax),%rsi
 a4f:	cmp    $0x7ff,%r12
 a56:	jbe    a65 <lpc_pread+0x185>
 a58:	cmpb   $0x0,0x0(%rip)        # a5f <lpc_pread+0x17f>
 a5f:	jne    bd0 <lpc_pread+0x2f0>
 a65:	mov    %r12,%rdx
 a68:	mov    %r13,%rdi
 a6b:	mov    %r10,0x8(%rsp)
 a70:	mov    %r9d,0x4(%rsp)
 a75:	call   a7a <lpc_pread+0x19a>
 a7a:	mov    0x8(%rsp),%r10
 a7f:	mov    0x4(%rsp),%r9d
 a84:	mov    0x8(%r15),%eax
 a88:	cmp    %eax,%r9d
 a8b:	jne    b50 <lpc_pread+0x270>
 a91:	mov    (%r10),%rax
 a94:	cmp    %rax,%r15
 a97:	jne    b50 <lpc_pread+0x270>
 a9d:	mov    0x4(%r15),%eax
 aa1:	test   $0x40,%al
 aa3:	jne    abd <lpc_pread+0x1dd>
 aa5:	test   $0x8,%ah
 aa8:	jne    cd0 <lpc_pread+0x3f0>
 aae:	test   $0x20,%ah
 ab1:	jne    ce0 <lpc_pread+0x400>
 ab7:	lock orl $0x40,0x4(%r15)
 abd:	mov    0x0(%rip),%rax        # ac4 <lpc_pread+0x1e4>
 ac4:	mov    %fs:0x8(%rax),%rdx
 ac9:	mov    0x100(%rdx),%rax
 ad0:	add    $0x1,%rax
 ad4:	mov    %rax,0x100(%rdx)
 adb:	mov    %fs:(%r14),%rax
 adf:	cmp    $0x1,%eax
 ae2:	jne    c08 <lpc_pread+0x328>
 ae8:	mov    0x0(%rip),%rdx        # aef <lpc_pread+0x20f>
 aef:	mov    (%rdx),%edi
 af1:	test   %edi,%edi
 af3:	je     cc0 <lpc_pread+0x3e0>
 af9:	sub    $0x1,%rax
 afd:	mov    %rax,%fs:(%r14)
 b01:	mov    (%rdx),%esi
 b03:	test   %esi,%esi
 b05:	je     cb0 <lpc_pread+0x3d0>
 b0b:	mov    0x0(%rip),%rax        # b12 <lpc_pread+0x232>
 b12:	mov    0x8(%rax),%edx
 b15:	cmp    $0xffffffff,%edx
 b18:	je     c48 <lpc_pread+0x368>
 b1e:	add    $0x18,%rsp
 b22:	mov    %r12,%rax
 b25:	pop    %rbx
 b26:	pop    %rbp
 b27:	pop    %r12
 b29:	pop    %r13
 b2b:	pop    %r14
 b2d:	pop    %r15
 b2f:	ret
 b30:	cmp    $0xc,%ecx
 b33:	jne    c20 <lpc_pread+0x340>
 b39:	mov    %rsi,%rcx
 b3c:	shr    $0xc,%rcx
 b40:	and    $0x3f,%ecx
 b43:	mov    (%rax,%rcx,8),%rax
 b47:	test   %rax,%rax
 b4a:	jne    9cd <lpc_pread+0xed>
 b50:	mov    %fs:(%r14),%rax
 b54:	lea    -0x1(%rax),%rcx
 b58:	cmp    $0x1,%eax
 b5b:	jne    cf0 <lpc_pread+0x410>
 b61:	mov    0x0(%rip),%rdx        # b68 <lpc_pread+0x288>
 b68:	mov    (%rdx),%r11d
 b6b:	test   %r11d,%r11d
 b6e:	je     c15 <lpc_pread+0x335>
 b74:	mov    %rcx,%fs:(%r14)
 b78:	mov    (%rdx),%r10d
 b7b:	test   %r10d,%r10d
 b7e:	je     d68 <lpc_pread+0x488>
 b84:	mov    0x0(%rip),%rax        # b8b <lpc_pread+0x2ab>
 b8b:	mov    0x8(%rax),%edx
 b8e:	cmp    $0xffffffff,%edx
 b91:	je     cf9 <lpc_pread+0x419>
 b97:	mov    $0x1,%r8d
 b9d:	jmp    ba3 <lpc_pread+0x2c3>
 b9f:	nop
 ba0:	xor    %r8d,%r8d
 ba3:	add    $0x18,%rsp
 ba7:	mov    %rbp,%rcx
 baa:	mov    %r12,%rdx
 bad:	mov    %r13,%rsi
 bb0:	mov    %rbx,%rdi
 bb3:	pop    %rbx
 bb4:	pop    %rbp
 bb5:	pop    %r12
 bb7:	pop    %r13
 bb9:	pop    %r14
 bbb:	pop    %r15
 bbd:	jmp    80 <pread_slow>
 bc2:	nopw   0x0(%rax,%rax,1)
 bc8:	mfence
 bcb:	jmp    993 <lpc_pread+0xb3>
 bd0:	mov    %r12,%rdx
 bd3:	mov    %r13,%rdi
 bd6:	mov    %r10,0x8(%rsp)
 bdb:	mov    %r9d,0x4(%rsp)
 be0:	call   0 <copy_avx2>
 be5:	mov    0x4(%rsp),%r9d
 bea:	mov    0x8(%rsp),%r10
 bef:	jmp    a84 <lpc_pread+0x1a4>
 bf4:	nopl   0x0(%rax)
 bf8:	add    $0x1,%rax
 bfc:	mov    %rax,%fs:(%r14)
 c00:	jmp    993 <lpc_pread+0xb3>
 c05:	nopl   (%rax)
 c08:	sub    $0x1,%rax
 c0c:	mov    %rax,%fs:(%r14)
 c10:	jmp    b1e <lpc_pread+0x23e>
 c15:	mfence
 c18:	jmp    b74 <lpc_pread+0x294>
 c1d:	nopl   (%rax)
 c20:	mov    %rsi,%rdi
 c23:	shr    %cl,%rdi
 c26:	and    $0x3f,%edi
 c29:	mov    (%rax,%rdi,8),%rax
 c2d:	test   %rax,%rax
 c30:	je     b50 <lpc_pread+0x270>
 c36:	sub    $0x6,%ecx
 c39:	cmp    $0xc,%ecx
 c3c:	jbe    b39 <lpc_pread+0x259>
 c42:	jmp    c20 <lpc_pread+0x340>
 c44:	nopl   0x0(%rax)
 c48:	movl   $0x0,0x8(%rax)
 c4f:	sub    $0x8,%rsp
 c53:	lea    0x8(%rax),%rbx
 c57:	mov    $0x1,%ecx
 c5c:	xor    %r9d,%r9d
 c5f:	push   $0x0
 c61:	mov    $0x1,%edx
 c66:	xor    %r8d,%r8d
 c69:	mov    %rbx,%rsi
 c6c:	mov    $0xca,%edi
 c71:	xor    %eax,%eax
 c73:	call   c78 <lpc_pread+0x398>
 c78:	pop    %rdx
 c79:	pop    %rcx
 c7a:	test   %eax,%eax
 c7c:	jns    b1e <lpc_pread+0x23e>
 c82:	call   c87 <lpc_pread+0x3a7>
 c87:	cmpl   $0x26,(%rax)
 c8a:	jne    b1e <lpc_pread+0x23e>
 c90:	xor    %r9d,%r9d
 c93:	xor    %r8d,%r8d
 c96:	xor    %ecx,%ecx
 c98:	mov    $0x1,%edx
 c9d:	mov    $0x1,%esi
 ca2:	mov    %rbx,%rdi
 ca5:	call   caa <lpc_pread+0x3ca>
 caa:	jmp    b1e <lpc_pread+0x23e>
 caf:	nop
 cb0:	mfence
 cb3:	jmp    b0b <lpc_pread+0x22b>
 cb8:	nopl   0x0(%rax,%rax,1)
 cc0:	mfence
 cc3:	jmp    af9 <lpc_pread+0x219>
 cc8:	nopl   0x0(%rax,%rax,1)
 cd0:	mov    %r15,%rdi
 cd3:	call   cd8 <lpc_pread+0x3f8>
 cd8:	jmp    abd <lpc_pread+0x1dd>
 cdd:	nopl   (%rax)
 ce0:	mov    %r15,%rdi
 ce3:	call   ce8 <lpc_pread+0x408>
 ce8:	jmp    abd <lpc_pread+0x1dd>
 ced:	nopl   (%rax)
 cf0:	mov    %rcx,%fs:(%r14)
 cf4:	jmp    b97 <lpc_pread+0x2b7>
 cf9:	movl   $0x0,0x8(%rax)
 d00:	sub    $0x8,%rsp
 d04:	lea    0x8(%rax),%r14
 d08:	xor    %r9d,%r9d
 d0b:	xor    %r8d,%r8d
 d0e:	push   $0x0
 d10:	mov    $0x1,%ecx
 d15:	mov    $0x1,%edx
 d1a:	mov    %r14,%rsi
 d1d:	mov    $0xca,%edi
 d22:	xor    %eax,%eax
 d24:	call   d29 <lpc_pread+0x449>
 d29:	pop    %r8
 d2b:	pop    %r9
 d2d:	test   %eax,%eax
 d2f:	jns    b97 <lpc_pread+0x2b7>
 d35:	call   d3a <lpc_pread+0x45a>
 d3a:	cmpl   $0x26,(%rax)
 d3d:	jne    b97 <lpc_pread+0x2b7>
 d43:	xor    %r9d,%r9d
 d46:	xor    %r8d,%r8d
 d49:	xor    %ecx,%ecx
 d4b:	mov    $0x1,%edx
 d50:	mov    $0x1,%esi
 d55:	mov    %r14,%rdi
 d58:	call   d5d <lpc_pread+0x47d>
 d5d:	jmp    b97 <lpc_pread+0x2b7>
 d62:	nopw   0x0(%rax,%rax,1)
 d68:	mfence
 d6b:	jmp    b84 <lpc_pread+0x2a4>
