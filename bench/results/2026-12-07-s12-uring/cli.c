#include "common.h"
int main(int c,char**v){int port=atoi(v[1]),N=atoi(v[2]);double dur=atof(v[3]);int sz=70;int ep=epoll_create1(0);char buf[4096];memset(buf,'x',sizeof buf);
for(int i=0;i<N;i++){int s=socket(AF_INET,SOCK_STREAM,0);struct sockaddr_in a={.sin_family=AF_INET,.sin_port=htons(port)};a.sin_addr.s_addr=htonl(0x7f000001);if(connect(s,(void*)&a,sizeof a)<0){perror("connect");return 1;}int one=1;setsockopt(s,IPPROTO_TCP,TCP_NODELAY,&one,4);fcntl(s,F_SETFL,O_NONBLOCK);struct epoll_event e={.events=EPOLLIN|EPOLLET,.data.fd=s};epoll_ctl(ep,EPOLL_CTL_ADD,s,&e);}
usleep(200000);for(int i=0;i<N;i++){}
/* fds are consecutive from 4 */ 
int first=ep+1;for(int i=0;i<N;i++)write(first+i,buf,sz);
double t0=now(),c0=cpu();long n=0;struct epoll_event ev[256];
while(now()-t0<dur){int k=epoll_wait(ep,ev,256,0);for(int i=0;i<k;i++){int fd=ev[i].data.fd;int r=read(fd,buf,sizeof buf);if(r>0){n++;write(fd,buf,sz);}}}
double t=now()-t0,cp=cpu()-c0;printf("%ld msgs in %.2fs: %.0f msg/s, client %.2f us cpu/msg\n",n,t,n/t,cp/n*1e6);return 0;}
