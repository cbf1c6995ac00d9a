00000000000008c0 <lpc_pread>:
 8c0:	push   %r15
 8c2:	push   %r14
 8c4:	push   %r13
 8c6:	mov    %rsi,%r13
 8c9:	push   %r12
 8cb:	mov    %rdx,%r12
 8ce:	push   %rbp
 8cf:	mov    %rcx,%rbp
 8d2:	push   %rbx
 8d3:	mov    %rdi,%rbx
 8d6:	sub    $0x18,%rsp
 8da:	test   %rdi,%rdi
 8dd:	je     b80 <lpc_pread+0x2c0>
 8e3:	test   %rsi,%rsi
 8e6:	je     b80 <lpc_pread+0x2c0>
 8ec:	mov    0x0(%rip),%rax        # 8f3 <lpc_pread+0x33>
 8f3:	mov    0x10(%rdi),%rdi
 8f7:	cmp    %rdi,%fs:(%rax)
 8fb:	jne    b80 <lpc_pread+0x2c0>
 901:	mov    (%rbx),%rax
 904:	lea    -0x1(%r12),%rsi
 909:	mov    0x1e0(%rax),%rax
 910:	lea    -0x1(%rax),%rdx
 914:	and    %rcx,%rdx
 917:	mov    0x140(%rbx),%rcx
 91e:	sub    %rdx,%rax
 921:	cmp    %rax,%rsi
 924:	jae    b80 <lpc_pread+0x2c0>
 92a:	cmp    %rcx,%rbp
 92d:	jae    b80 <lpc_pread+0x2c0>
 933:	sub    %rbp,%rcx
 936:	cmp    %r12,%rcx
 939:	jb     b80 <lpc_pread+0x2c0>
 93f:	mov    0x0(%rip),%r14        # 946 <lpc_pread+0x86>
 946:	mov    %fs:(%r14),%rax
 94a:	test   %eax,%eax
 94c:	jne    bd8 <lpc_pread+0x318>
 952:	mov    0x0(%rip),%rax        # 959 <lpc_pread+0x99>
 959:	mov    (%rax),%rax
 95c:	mov    %rax,%fs:(%r14)
 960:	mov    0x0(%rip),%rax        # 967 <lpc_pread+0xa7>
 967:	mov    (%rax),%r15d
 96a:	test   %r15d,%r15d
 96d:	je     ba8 <lpc_pread+0x2e8>
 973:	mov    0x34(%rbx),%ecx
 976:	mov    0x18(%rbx),%rax
 97a:	mov    %rbp,%rsi
 97d:	shr    %cl,%rsi
 980:	test   %rax,%rax
 983:	je     b30 <lpc_pread+0x270>
 989:	movzbl 0x200(%rax),%ecx
 990:	mov    %rsi,%rdi
 993:	shr    %cl,%rdi
 996:	cmp    $0x3f,%rdi
 99a:	ja     b30 <lpc_pread+0x270>
 9a0:	cmp    $0xb,%ecx
 9a3:	ja     b10 <lpc_pread+0x250>
 9a9:	test   %ecx,%ecx
 9ab:	je     9c4 <lpc_pread+0x104>
 9ad:	mov    %rsi,%rcx
 9b0:	shr    $0x6,%rcx
 9b4:	and    $0x3f,%ecx
 9b7:	mov    (%rax,%rcx,8),%rax
 9bb:	test   %rax,%rax
 9be:	je     b30 <lpc_pread+0x270>
 9c4:	mov    %rsi,%rcx
 9c7:	and    $0x3f,%ecx
 9ca:	lea    (%rax,%rcx,8),%r10
 9ce:	mov    (%r10),%r15
 9d1:	test   %r15,%r15
 9d4:	je     b30 <lpc_pread+0x270>
 9da:	mov    0x8(%r15),%r9d
 9de:	mov    0x4(%r15),%eax
 9e2:	test   $0x1,%r9b
 9e6:	jne    b30 <lpc_pread+0x270>
 9ec:	and    $0x404,%eax
 9f1:	cmp    $0x4,%eax
 9f4:	jne    b30 <lpc_pread+0x270>
 9fa:	mov    0x18(%r15),%rax
 9fe:	cmp    %rax,%rbx
 a01:	jne    b30 <lpc_pread+0x270>
 a07:	mov    0x20(%r15),%rax
 a0b:	cmp    %rax,%rsi
 a0e:	jne    b30 <lpc_pread+0x270>
 a14:	mov    0x10(%r15),%rax
 a18:	mov    0xc(%r15),%esi
 a1c:	mov    0x1dc(%rax),%ecx
 a22:	shl    %cl,%rsi
 a25:	add    %rdx,%rsi
 a28:	add    0x1d0(%rax),%rsi
 a2f:	cmp    $0x7ff,%r12
 a36:	jbe    a45 <lpc_pread+0x185>
 a38:	cmpb   $0x0,0x0(%rip)        # a3f <lpc_pread+0x17f>
 a3f:	jne    bb0 <lpc_pread+0x2f0>
 a45:	mov    %r12,%rdx
 a48:	mov    %r13,%rdi
 a4b:	mov    %r10,0x8(%rsp)
 a50:	mov    %r9d,0x4(%rsp)
 a55:	call   a5a <lpc_pread+0x19a>
 a5a:	mov    0x8(%rsp),%r10
 a5f:	mov    0x4(%rsp),%r9d
 a64:	mov    0x8(%r15),%eax
 a68:	cmp    %eax,%r9d
 a6b:	jne    b30 <lpc_pread+0x270>
 a71:	mov    (%r10),%rax
 a74:	cmp    %rax,%r15
 a77:	jne    b30 <lpc_pread+0x270>
 a7d:	mov    0x4(%r15),%eax
 a81:	test   $0x40,%al
 a83:	jne    a94 <lpc_pread+0x1d4>
 a85:	test   $0x8,%ah
 a88:	jne    cb0 <lpc_pread+0x3f0>
 a8e:	lock orl $0x40,0x4(%r15)
 a94:	mov    0x0(%rip),%rax        # a9b <lpc_pread+0x1db>
 a9b:	mov    %fs:0x8(%rax),%rdx
 aa0:	mov    0x100(%rdx),%rax
 aa7:	add    $0x1,%rax
 aab:	mov    %rax,0x100(%rdx)
 ab2:	mov    %fs:(%r14),%rax
 ab6:	cmp    $0x1,%eax
 ab9:	jne    be8 <lpc_pread+0x328>
 abf:	mov    0x0(%rip),%rdx        # ac6 <lpc_pread+0x206>
 ac6:	mov    (%rdx),%edi
 ac8:	test   %edi,%edi
 aca:	je     ca0 <lpc_pread+0x3e0>
 ad0:	sub    $0x1,%rax
 ad4:	mov    %rax,%fs:(%r14)
 ad8:	mov    (%rdx),%esi
 ada:	test   %esi,%esi
 adc:	je     c90 <lpc_pread+0x3d0>
 ae2:	mov    0x0(%rip),%rax        # ae9 <lpc_pread+0x229>
 ae9:	mov    0x8(%rax),%edx
 aec:	cmp    $0xffffffff,%edx
 aef:	je     c28 <lpc_pread+0x368>
 af5:	add    $0x18,%rsp
 af9:	mov    %r12,%rax
 afc:	pop    %rbx
 afd:	pop    %rbp
 afe:	pop    %r12
 b00:	pop    %r13
 b02:	pop    %r14
 b04:	pop    %r15
 b06:	ret
 b07:	nopw   0x0(%rax,%rax,1)
 b10:	cmp    $0xc,%ecx
 b13:	jne    c00 <lpc_pread+0x340>
 b19:	mov    %rsi,%rcx
 b1c:	shr    $0xc,%rcx
 b20:	and    $0x3f,%ecx
 b23:	mov    (%rax,%rcx,8),%rax
 b27:	test   %rax,%rax
 b2a:	jne    9ad <lpc_pread+0xed>
 b30:	mov    %fs:(%r14),%rax
 b34:	lea    -0x1(%rax),%rcx
 b38:	cmp    $0x1,%eax
 b3b:	jne    cc0 <lpc_pread+0x400>
 b41:	mov    0x0(%rip),%rdx        # b48 <lpc_pread+0x288>
 b48:	mov    (%rdx),%r11d
 b4b:	test   %r11d,%r11d
 b4e:	je     bf5 <lpc_pread+0x335>
 b54:	mov    %rcx,%fs:(%r14)
 b58:	mov    (%rdx),%r10d
 b5b:	test   %r10d,%r10d
 b5e:	je     d38 <lpc_pread+0x478>
 b64:	mov    0x0(%rip),%rax        # b6b <lpc_pread+0x2ab>
 b6b:	mov    0x8(%rax),%edx
 b6e:	cmp    $0xffffffff,%edx
 b71:	je     cc9 <lpc_pread+0x409>
 b77:	mov    $0x1,%r8d
 b7d:	jmp    b83 <lpc_pread+0x2c3>
 b7f:	nop
 b80:	xor    %r8d,%r8d
 b83:	add    $0x18,%rsp
 b87:	mov    %rbp,%rcx
 b8a:	mov    %r12,%rdx
 b8d:	mov    %r13,%rsi
 b90:	mov    %rbx,%rdi
 b93:	pop    %rbx
 b94:	pop    %rbp
 b95:	pop    %r12
 b97:	pop    %r13
 b99:	pop    %r14
 b9b:	pop    %r15
 b9d:	jmp    80 <pread_slow>
 ba2:	nopw   0x0(%rax,%rax,1)
 ba8:	mfence
 bab:	jmp    973 <lpc_pread+0xb3>
 bb0:	mov    %r12,%rdx
 bb3:	mov    %r13,%rdi
 bb6:	mov    %r10,0x8(%rsp)
 bbb:	mov    %r9d,0x4(%rsp)
 bc0:	call   0 <copy_avx2>
 bc5:	mov    0x4(%rsp),%r9d
 bca:	mov    0x8(%rsp),%r10
 bcf:	jmp    a64 <lpc_pread+0x1a4>
 bd4:	nopl   0x0(%rax)
 bd8:	add    $0x1,%rax
 bdc:	mov    %rax,%fs:(%r14)
 be0:	jmp    973 <lpc_pread+0xb3>
 be5:	nopl   (%rax)
 be8:	sub    $0x1,%rax
 bec:	mov    %rax,%fs:(%r14)
 bf0:	jmp    af5 <lpc_pread+0x235>
 bf5:	mfence
 bf8:	jmp    b54 <lpc_pread+0x294>
 bfd:	nopl   (%rax)
 c00:	mov    %rsi,%rdi
 c03:	shr    %cl,%rdi
 c06:	and    $0x3f,%edi
 c09:	mov    (%rax,%rdi,8),%rax
 c0d:	test   %rax,%rax
 c10:	je     b30 <lpc_pread+0x270>
 c16:	sub    $0x6,%ecx
 c19:	cmp    $0xc,%ecx
 c1c:	jbe    b19 <lpc_pread+0x259>
 c22:	jmp    c00 <lpc_pread+0x340>
 c24:	nopl   0x0(%rax)
 c28:	movl   $0x0,0x8(%rax)
 c2f:	sub    $0x8,%rsp
 c33:	lea    0x8(%rax),%rbx
 c37:	mov    $0x1,%ecx
 c3c:	xor    %r9d,%r9d
 c3f:	push   $0x0
 c41:	mov    $0x1,%edx
 c46:	xor    %r8d,%r8d
 c49:	mov    %rbx,%rsi
 c4c:	mov    $0xca,%edi
 c51:	xor    %eax,%eax
 c53:	call   c58 <lpc_pread+0x398>
 c58:	pop    %rdx
 c59:	pop    %rcx
 c5a:	test   %eax,%eax
 c5c:	jns    af5 <lpc_pread+0x235>
 c62:	call   c67 <lpc_pread+0x3a7>
 c67:	cmpl   $0x26,(%rax)
 c6a:	jne    af5 <lpc_pread+0x235>
 c70:	xor    %r9d,%r9d
 c73:	xor    %r8d,%r8d
 c76:	xor    %ecx,%ecx
 c78:	mov    $0x1,%edx
 c7d:	mov    $0x1,%esi
 c82:	mov    %rbx,%rdi
 c85:	call   c8a <lpc_pread+0x3ca>
 c8a:	jmp    af5 <lpc_pread+0x235>
 c8f:	nop
 c90:	mfence
 c93:	jmp    ae2 <lpc_pread+0x222>
 c98:	nopl   0x0(%rax,%rax,1)
 ca0:	mfence
 ca3:	jmp    ad0 <lpc_pread+0x210>
 ca8:	nopl   0x0(%rax,%rax,1)
 cb0:	mov    %r15,%rdi
 cb3:	call   cb8 <lpc_pread+0x3f8>
 cb8:	jmp    a94 <lpc_pread+0x1d4>
 cbd:	nopl   (%rax)
 cc0:	mov    %rcx,%fs:(%r14)
 cc4:	jmp    b77 <lpc_pread+0x2b7>
 cc9:	movl   $0x0,0x8(%rax)
 cd0:	sub    $0x8,%rsp
 cd4:	lea    0x8(%rax),%r14
 cd8:	xor    %r9d,%r9d
 cdb:	xor    %r8d,%r8d
 cde:	push   $0x0
 ce0:	mov    $0x1,%ecx
 ce5:	mov    $0x1,%edx
 cea:	mov    %r14,%rsi
 ced:	mov    $0xca,%edi
 cf2:	xor    %eax,%eax
 cf4:	call   cf9 <lpc_pread+0x439>
 cf9:	pop    %r8
 cfb:	pop    %r9
 cfd:	test   %eax,%eax
 cff:	jns    b77 <lpc_pread+0x2b7>
 d05:	call   d0a <lpc_pread+0x44a>
 d0a:	cmpl   $0x26,(%rax)
 d0d:	jne    b77 <lpc_pread+0x2b7>
 d13:	xor    %r9d,%r9d
 d16:	xor    %r8d,%r8d
 d19:	xor    %ecx,%ecx
 d1b:	mov    $0x1,%edx
 d20:	mov    $0x1,%esi
 d25:	mov    %r14,%rdi
 d28:	call   d2d <lpc_pread+0x46d>
 d2d:	jmp    b77 <lpc_pread+0x2b7>
 d32:	nopw   0x0(%rax,%rax,1)
 d38:	mfence
 d3b:	jmp    b64 <lpc_pread+0x2a4>
