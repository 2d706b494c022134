/* netlib's argument checks of SGEMM (sgemm.f, LAPACK 3.11), in its order. */
#include "ogb_check.h"

/* LSAME's rule: the same letter regardless of case. */
static int same_letter(char c, char want)
{
    return c == want || c == want + ('a' - 'A');
}

/* 'N' or 'T' for a valid transpose letter (N, T or C, either case); 0 otherwise. */
static char trans_of(char c)
{
    if (same_letter(c, 'N'))
        return 'N';
    if (same_letter(c, 'T') || same_letter(c, 'C'))
        return 'T';
    return 0;
}

static int max1(int x)
{
    return x > 1 ? x : 1;
}

int ogb_check(ogb_call *call)
{
    char ta = trans_of(call->transa), tb = trans_of(call->transb);
    int info = 0;
    if (!ta)
        info = 1;
    else if (!tb)
        info = 2;
    else if (call->m < 0)
        info = 3;
    else if (call->n < 0)
        info = 4;
    else if (call->k < 0)
        info = 5;
    else if (call->lda < max1(ta == 'N' ? call->m : call->k))
        info = 8;
    else if (call->ldb < max1(tb == 'N' ? call->k : call->n))
        info = 10;
    else if (call->ldc < max1(call->m))
        info = 13;
    if (info == 0) {
        call->transa = ta;
        call->transb = tb;
    }
    return info;
}
