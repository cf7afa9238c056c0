#include "common.h"
int main(int c,char**v){int port=atoi(v[1]);signal(SIGTERM,onterm);signal(SIGINT,onterm);int l=listen_on(port);int ep=epoll_create1(0);
struct epoll_event e={.events=EPOLLIN,.data.fd=l};epoll_ctl(ep,EPOLL_CTL_ADD,l,&e);struct epoll_event ev[256];char buf[4096];double c0=0,t0=0;long n=0;
while(!stop){int k=epoll_wait(ep,ev,256,100);for(int i=0;i<k;i++){int fd=ev[i].data.fd;if(fd==l){int s;while((s=accept4(l,0,0,SOCK_NONBLOCK))>=0){int one=1;setsockopt(s,IPPROTO_TCP,TCP_NODELAY,&one,4);struct epoll_event x={.events=EPOLLIN|EPOLLET,.data.fd=s};epoll_ctl(ep,EPOLL_CTL_ADD,s,&x);}if(!t0){t0=now();c0=cpu();}continue;}
 int r=read(fd,buf,sizeof buf);if(r<=0){if(r==0||errno!=EAGAIN)close(fd);continue;}write(fd,buf,r);n++;}}
double t=now()-t0,cp=cpu()-c0;fprintf(stderr,"epoll: %ld msgs, %.2f us cpu/msg\n",n,cp/n*1e6);return 0;}
