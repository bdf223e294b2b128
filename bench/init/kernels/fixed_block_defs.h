// The build's definitions, included by the host before the kernel file (as
// Rodinia's define.c is): the element type and the block size the kernel's
// index is written for.
#define fp float
#define THREADS 256
