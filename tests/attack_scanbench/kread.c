#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/mman.h>
/* kread FILE CALL_KB [direct]: drop FILE from the page cache, read it once
 * sequentially, check block stamps, print MB/s and CPU us per MiB. */
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int argc,char**argv){
	size_t call=(size_t)atoi(argv[2])<<10; int direct=argc>3&&argv[3][0]=='d';
	int fd=open(argv[1],O_RDONLY); posix_fadvise(fd,0,0,POSIX_FADV_DONTNEED); close(fd);
	if(argc>4&&atoi(argv[4])){size_t n=(size_t)atoi(argv[4])<<20;char*p=mmap(0,n,3,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);madvise(p,n,MADV_HUGEPAGE);for(size_t i=0;i<n;i+=4096)p[i]=1;munmap(p,n);}
	fd=open(argv[1],O_RDONLY|(direct?O_DIRECT:0));
	off_t size=lseek(fd,0,SEEK_END);
	char*buf=aligned_alloc(1<<21,1<<21); memset(buf,0,1<<21);
	struct rusage r0,r1; getrusage(RUSAGE_SELF,&r0);
	double t0=now(); off_t off=0;
	while(off<size){ssize_t n=pread(fd,buf,call,off); if(n!=(ssize_t)call){perror("pread");return 1;}
		for(size_t b=0;b<call;b+=4096) if(*(uint64_t*)(buf+b)!=(uint64_t)(off+b)/4096){fprintf(stderr,"bad\n");return 1;}
		off+=n;}
	double t=now()-t0; getrusage(RUSAGE_SELF,&r1);
	double cpu=(r1.ru_utime.tv_sec-r0.ru_utime.tv_sec+r1.ru_stime.tv_sec-r0.ru_stime.tv_sec)*1e6+(r1.ru_utime.tv_usec-r0.ru_utime.tv_usec+r1.ru_stime.tv_usec-r0.ru_stime.tv_usec);
	printf("%.0f MB/s  cpu %.0f us/MiB\n",size/t/1e6,cpu/(size>>20));
	return 0;}
