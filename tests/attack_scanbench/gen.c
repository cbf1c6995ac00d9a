#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
int main(int c,char**v){uint64_t mb=atoll(v[2]);int fd=open(v[1],O_WRONLY|O_CREAT|O_TRUNC,0600);char*b=malloc(1<<20);
for(uint64_t m=0;m<mb;m++){for(int o=0;o<(1<<20);o+=4096){uint64_t blk=m*256+o/4096;memset(b+o,0xa5^(unsigned char)blk,4096);memcpy(b+o,&blk,8);}write(fd,b,1<<20);}
fdatasync(fd);close(fd);return 0;}
