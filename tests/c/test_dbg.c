#include <stdio.h>
#include <math.h>
#include "block_lstable.h"
int main(void){
  char msg[256];
  for(int r=2;r<=6;r++) for(int nd=0;nd<3;nd++){ int k,j; mb_block_default_pade(0,r,&k,&j);
    for(int v=0; v<2; v++){ if(v) {k=r;j=r;}
    mb_block_coeffs co; int rc=mb_block_coefficients(r,nd,k,j,&co,msg,sizeof msg);
    printf("r=%d nodes=%d (%d,%d) rc=%d order %d stage %d mu_r %.15f %s\n",r,nd,k,j,rc,co.order,co.stage_order,co.mu[r-1], rc?msg:"");
    double Rr,Ri; mb_block_stability(&co,-1e8,0,&Rr,&Ri); printf("   R(-1e8)=%.3g\n",Rr);}
  }
  mb_block_coeffs co; mb_block_coefficients(3,0,2,3,&co,msg,256);
  for(int i=0;i<3;i++){for(int l=0;l<3;l++) printf("%.15f ",3*co.B[i*3+l]); printf(" | %.15f mu %.15f\n",3*co.d[i], co.mu[i]);}
  int rc=mb_block_coefficients(4,0,3,3,&co,msg,256); printf("(3,3) r=4: %d %s\n",rc,msg);
  rc=mb_block_coefficients(3,0,1,1,&co,msg,256); printf("(1,1) r=3: %d %s\n",rc,msg);
  rc=mb_block_coefficients(3,0,2,2,&co,msg,256); printf("(2,2) r=3: %d %s\n",rc,msg);
  rc=mb_block_coefficients(3,0,1,2,&co,msg,256); printf("(1,2) r=3: %d %s\n",rc,msg);
  return 0;}
