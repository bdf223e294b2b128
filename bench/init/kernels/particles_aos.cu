// One explicit Euler step of falling particles stored as an array of
// structures: each thread loads its particle whole, moves it and stores it
// back. Written for gi (11-29): a buffer of structs, drafted as records of
// 7 floats (float3, float3, float).
struct Particle {
  float3 pos;
  float3 vel;
  float mass;
};

__global__ void particles_aos(Particle* particles, int n, float dt) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Particle p = particles[i];
    p.vel.y -= 9.81f * dt;
    p.pos.x += p.vel.x * dt;
    p.pos.y += p.vel.y * dt;
    p.pos.z += p.vel.z * dt;
    particles[i] = p;
  }
}
