#include "common.h"
#include <liburing.h>
#define MAXC 20000
static char bufs[MAXC][512];
enum{ACC=1,RECV=2,SEND=3};
#define UD(op,fd) (((unsigned long long)(op)<<32)|(unsigned)(fd))
int main(int c,char**v){int port=atoi(v[1]);signal(SIGTERM,onterm);signal(SIGINT,onterm);int l=listen_on(port);struct io_uring ring;struct io_uring_params p={0};p.flags=IORING_SETUP_SINGLE_ISSUER|IORING_SETUP_DEFER_TASKRUN|IORING_SETUP_SUBMIT_ALL;p.cq_entries=65536;p.flags|=IORING_SETUP_CQSIZE;
int rc=io_uring_queue_init_params(4096,&ring,&p);if(rc<0){fprintf(stderr,"init %s\n",strerror(-rc));return 1;}
struct io_uring_sqe*s=io_uring_get_sqe(&ring);io_uring_prep_multishot_accept(s,l,0,0,0);s->user_data=UD(ACC,l);io_uring_submit(&ring);long n=0;double c0=0;
while(!stop){struct __kernel_timespec ts={0,100000000};struct io_uring_cqe*cq;int r=io_uring_submit_and_wait_timeout(&ring,&cq,1,&ts,0);(void)r;unsigned head;int cnt=0;
 io_uring_for_each_cqe(&ring,head,cq){cnt++;int op=cq->user_data>>32,fd=(int)(cq->user_data&0xffffffff);int res=cq->res;
  if(op==ACC){if(res>=0){int one=1;setsockopt(res,IPPROTO_TCP,TCP_NODELAY,&one,4);struct io_uring_sqe*q=io_uring_get_sqe(&ring);io_uring_prep_recv(q,res,bufs[res],512,0);q->user_data=UD(RECV,res);if(!c0)c0=cpu();}}
  else if(op==RECV){if(res<=0){close(fd);}else{struct io_uring_sqe*q=io_uring_get_sqe(&ring);io_uring_prep_send(q,fd,bufs[fd],res,0);q->user_data=UD(SEND,fd);n++;}}
  else if(op==SEND){struct io_uring_sqe*q=io_uring_get_sqe(&ring);io_uring_prep_recv(q,fd,bufs[fd],512,0);q->user_data=UD(RECV,fd);}
 }io_uring_cq_advance(&ring,cnt);}
fprintf(stderr,"uring: %ld msgs, %.2f us cpu/msg\n",n,(cpu()-c0)/n*1e6);return 0;}
