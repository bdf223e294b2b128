__global__ void k(int* out, int n) {
  int i = 0;
  do {
    i++;
    if (i > n) break;
  } while (i < 10);
  switch (n) {
    case 1: out[0] = 1; break;
    default:
      out[0] = i;
  }
  while (i > 0) { i--; continue; }
}
