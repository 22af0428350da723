/*
 * backend_cuda_kernels.cu - the element-wise kernels of the cuda backend
 * for `tpplan exec` (backend.h): GeLU forward / backward (tanh form),
 * causal softmax forward / backward (one block per row), LayerNorm without
 * affine parameters forward / backward (one block per row), axpby.  fp32
 * in backend memory, launched on the backend's stream; the C launchers
 * below return the cudaError_t of the launch, backend_cuda.c converts it.
 * Same math as the cpu backend (backend_cpu.c).
 */
#include <cuda_runtime.h>

#define TPB 256
#define GELU_C 0.7978845608028654f

__global__ void k_gelu_fwd(size_t n, const float *x, float *y)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
		float v = x[i];
		y[i] = 0.5f * v * (1.0f + tanhf(GELU_C * (v + 0.044715f * v * v * v)));
	}
}

__global__ void k_gelu_bwd(size_t n, const float *x, const float *dy, float *dx)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
		float v = x[i];
		float t = tanhf(GELU_C * (v + 0.044715f * v * v * v));
		float d = 0.5f * (1.0f + t) +
			  0.5f * v * (1.0f - t * t) * GELU_C * (1.0f + 3.0f * 0.044715f * v * v);
		dx[i] = dy[i] * d;
	}
}

__global__ void k_axpby(size_t n, float a, const float *x, float b, float *y)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i < n; i += (size_t)gridDim.x * blockDim.x)
		y[i] = a * x[i] + b * y[i];
}

/* block-wide sum (blockDim.x == TPB) */
__device__ float block_sum(float v, float *sh)
{
	int t = threadIdx.x;
	sh[t] = v;
	__syncthreads();
	for (int s = TPB / 2; s > 0; s >>= 1) {
		if (t < s)
			sh[t] += sh[t + s];
		__syncthreads();
	}
	v = sh[0];
	__syncthreads();
	return v;
}

__device__ float block_max(float v, float *sh)
{
	int t = threadIdx.x;
	sh[t] = v;
	__syncthreads();
	for (int s = TPB / 2; s > 0; s >>= 1) {
		if (t < s)
			sh[t] = fmaxf(sh[t], sh[t + s]);
		__syncthreads();
	}
	v = sh[0];
	__syncthreads();
	return v;
}

__global__ void k_softmax_fwd(int cols, int ld, float *s)
{
	__shared__ float sh[TPB];
	int i = blockIdx.x, last = i < cols ? i : cols - 1;
	float *r = s + (size_t)i * ld, mx = -INFINITY, sum = 0.0f;
	for (int j = threadIdx.x; j <= last; j += TPB)
		mx = fmaxf(mx, r[j]);
	mx = block_max(mx, sh);
	for (int j = threadIdx.x; j <= last; j += TPB)
		sum += expf(r[j] - mx);
	sum = block_sum(sum, sh);
	for (int j = threadIdx.x; j < cols; j += TPB)
		r[j] = j <= last ? expf(r[j] - mx) / sum : 0.0f;
}

__global__ void k_softmax_bwd(int cols, int ld, const float *p, float *dp)
{
	__shared__ float sh[TPB];
	const float *pr = p + (size_t)blockIdx.x * ld;
	float *dr = dp + (size_t)blockIdx.x * ld, dot = 0.0f;
	for (int j = threadIdx.x; j < cols; j += TPB)
		dot += pr[j] * dr[j];
	dot = block_sum(dot, sh);
	for (int j = threadIdx.x; j < cols; j += TPB)
		dr[j] = pr[j] * (dr[j] - dot);
}

__global__ void k_ln_fwd(int cols, const float *x, float *y, float *mean, float *rstd)
{
	__shared__ float sh[TPB];
	const float *r = x + (size_t)blockIdx.x * cols;
	float *o = y + (size_t)blockIdx.x * cols, m = 0.0f, v = 0.0f;
	for (int j = threadIdx.x; j < cols; j += TPB)
		m += r[j];
	m = block_sum(m, sh) / cols;
	for (int j = threadIdx.x; j < cols; j += TPB)
		v += (r[j] - m) * (r[j] - m);
	v = block_sum(v, sh) / cols;
	float rs = rsqrtf(v + 1e-5f);
	if (threadIdx.x == 0) {
		mean[blockIdx.x] = m;
		rstd[blockIdx.x] = rs;
	}
	for (int j = threadIdx.x; j < cols; j += TPB)
		o[j] = (r[j] - m) * rs;
}

__global__ void k_ln_bwd(int cols, const float *x, const float *mean,
			 const float *rstd, const float *dy, float *dx)
{
	__shared__ float sh[TPB];
	size_t off = (size_t)blockIdx.x * cols;
	float m = mean[blockIdx.x], rs = rstd[blockIdx.x], sg = 0.0f, sgx = 0.0f;
	for (int j = threadIdx.x; j < cols; j += TPB) {
		sg += dy[off + j];
		sgx += dy[off + j] * (x[off + j] - m) * rs;
	}
	sg = block_sum(sg, sh) / cols;
	sgx = block_sum(sgx, sh) / cols;
	for (int j = threadIdx.x; j < cols; j += TPB)
		dx[off + j] = rs * (dy[off + j] - sg - (x[off + j] - m) * rs * sgx);
}

static unsigned grid_for(size_t n)
{
	size_t g = (n + TPB - 1) / TPB;
	return (unsigned)(g > 65535 ? 65535 : (g ? g : 1));
}

extern "C" {

cudaError_t tpp_cuk_gelu_fwd(cudaStream_t st, size_t n, const float *x, float *y)
{
	k_gelu_fwd<<<grid_for(n), TPB, 0, st>>>(n, x, y);
	return cudaGetLastError();
}

cudaError_t tpp_cuk_gelu_bwd(cudaStream_t st, size_t n, const float *x,
			     const float *dy, float *dx)
{
	k_gelu_bwd<<<grid_for(n), TPB, 0, st>>>(n, x, dy, dx);
	return cudaGetLastError();
}

cudaError_t tpp_cuk_axpby(cudaStream_t st, size_t n, float a, const float *x,
			  float b, float *y)
{
	k_axpby<<<grid_for(n), TPB, 0, st>>>(n, a, x, b, y);
	return cudaGetLastError();
}

cudaError_t tpp_cuk_softmax_fwd(cudaStream_t st, int rows, int cols, int ld, float *s)
{
	k_softmax_fwd<<<rows, TPB, 0, st>>>(cols, ld, s);
	return cudaGetLastError();
}

cudaError_t tpp_cuk_softmax_bwd(cudaStream_t st, int rows, int cols, int ld,
				const float *p, float *dp)
{
	k_softmax_bwd<<<rows, TPB, 0, st>>>(cols, ld, p, dp);
	return cudaGetLastError();
}

cudaError_t tpp_cuk_ln_fwd(cudaStream_t st, int rows, int cols, const float *x,
			   float *y, float *mean, float *rstd)
{
	k_ln_fwd<<<rows, TPB, 0, st>>>(cols, x, y, mean, rstd);
	return cudaGetLastError();
}

cudaError_t tpp_cuk_ln_bwd(cudaStream_t st, int rows, int cols, const float *x,
			   const float *mean, const float *rstd, const float *dy,
			   float *dx)
{
	k_ln_bwd<<<rows, TPB, 0, st>>>(cols, x, mean, rstd, dy, dx);
	return cudaGetLastError();
}

}
