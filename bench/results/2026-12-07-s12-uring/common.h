#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static double cpu(void){struct rusage r;getrusage(RUSAGE_SELF,&r);return r.ru_utime.tv_sec+r.ru_utime.tv_usec/1e6+r.ru_stime.tv_sec+r.ru_stime.tv_usec/1e6;}
static volatile long nmsg; static volatile int stop;
static void onterm(int s){(void)s;stop=1;}
static int listen_on(int port){int l=socket(AF_INET,SOCK_STREAM,0);int one=1;setsockopt(l,SOL_SOCKET,SO_REUSEADDR,&one,4);struct sockaddr_in a={.sin_family=AF_INET,.sin_port=htons(port)};a.sin_addr.s_addr=htonl(0x7f000001);if(bind(l,(void*)&a,sizeof a)<0){perror("bind");exit(1);}listen(l,4096);fcntl(l,F_SETFL,O_NONBLOCK);return l;}
