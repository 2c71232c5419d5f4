// MatMul on cuBLASLt. axon's matrices are row-major; cuBLAS is column-major, so
// C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T with no copies. Each
// shape's operation, layouts and algorithm (cuBLASLt's heuristics, no timing
// runs) are chosen once and kept for the life of the device: a call only runs
// them. On an H200 a call costs 8-9 us of host time this way, cublasSgemm
// 14-16 us (axon-bench-cuda): more than the small products themselves take.
#include "cuda_device.hpp"
#include "math_policy.hpp"

#include <cublasLt.h>

#include <array>
#include <map>
#include <memory>

namespace axon::cuda {

namespace {

// One product shape's plan.
struct MatmulPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLAS's A (our b), B (our a), C
  bool found = false;  // whether the heuristics offered an algorithm (else cublasSgemm runs the shape)
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  MatmulPlan() = default;
  MatmulPlan(const MatmulPlan&) = delete;
  MatmulPlan& operator=(const MatmulPlan&) = delete;
  ~MatmulPlan() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// m, n, k, transpose a, transpose b, TF32, deterministic.
using MatmulKey = std::array<int64_t, 7>;

// A device's plans and its cuBLASLt handle (CudaDevice::matmul_plans); a
// device's kernels come from one thread at a time, as its ConvPlans do.
struct MatmulPlans {
  cublasLtHandle_t lt = nullptr;
  std::map<MatmulKey, std::unique_ptr<MatmulPlan>> plans;
  MatmulPlans() { CUBLAS_CHECK(cublasLtCreate(&lt)); }
  MatmulPlans(const MatmulPlans&) = delete;
  MatmulPlans& operator=(const MatmulPlans&) = delete;
  ~MatmulPlans() {
    plans.clear();
    if (lt) cublasLtDestroy(lt);
  }
};

MatmulPlans& plans_of(CudaDevice& d) {
  auto& slot = d.matmul_plans();
  if (!slot) slot = std::make_shared<MatmulPlans>();
  return *static_cast<MatmulPlans*>(slot.get());
}

// The plan for C^T [n, m] = op(B)^T [n, k] op(A)^T [k, m], column-major, from
// row-major a [m, k] (or [k, m] transposed) and b [k, n] (or [n, k]).
MatmulPlan& plan_for(CudaDevice& d, MatmulPlans& all, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  const MatmulKey key{m, n, k, ta, tb, d.allow_tf32(), d.deterministic()};
  auto& slot = all.plans[key];
  if (slot) return *slot;
  auto p = std::make_unique<MatmulPlan>();
  const cublasComputeType_t compute = cublaslt_compute({d.allow_tf32(), d.deterministic()});
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->op, compute, CUDA_R_32F));
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &op_b, sizeof op_b));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &op_a, sizeof op_a));
  // Stored column-major: b as [rows, cols] = [n, k] (or [k, n] transposed), a as [k, m] (or [m, k]).
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_32F, tb ? k : n, tb ? n : k, tb ? k : n));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_32F, ta ? m : k, ta ? k : m, ta ? m : k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->c, CUDA_R_32F, n, m, n));
  cublasLtMatmulPreference_t raw = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&raw));
  const std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, cublasStatus_t (*)(cublasLtMatmulPreference_t)> pref(
      raw, cublasLtMatmulPreferenceDestroy);
  const size_t workspace = d.cublas_workspace_bytes();
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                    sizeof workspace));
  // Under --deterministic, no split-K reduction (sums in an order that may vary).
  const uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_NONE;
  if (d.deterministic())
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                      &reductions, sizeof reductions));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t s =
      cublasLtMatmulAlgoGetHeuristic(all.lt, p->op, p->a, p->b, p->c, p->c, pref.get(), 1, &result, &found);
  if (s != CUBLAS_STATUS_NOT_SUPPORTED) CUBLAS_CHECK(s);
  p->found = s == CUBLAS_STATUS_SUCCESS && found > 0 && result.state == CUBLAS_STATUS_SUCCESS;
  if (p->found) {
    p->algo = result.algo;
    p->workspace = result.workspaceSize;
  } else {
    d.log(AXON_LOG_DEBUG, sdk::format("%s: MatMul: cuBLASLt offers no algorithm for m=%lld n=%lld k=%lld; "
                                      "cublasSgemm runs it",
                                      d.label().c_str(), (long long)m, (long long)n, (long long)k));
  }
  slot = std::move(p);
  return *slot;
}

void matmul(CudaDevice& d, const sdk::KernelCall& c) {
  auto a = c.input(0), b = c.input(1), y = c.output(0);
  const auto& at = c.attrs<axon_matmul_attrs>();
  const bool ta = at.transpose_a != 0, tb = at.transpose_b != 0;
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t n = tb ? b.dim(0) : b.dim(1);
  sdk::require(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX,
               sdk::format("%s: a %s and b %s are too large for cuBLAS (dimensions up to 2^31-1)", c.op(),
                           a.shape_string().c_str(), b.shape_string().c_str()));
  if (m == 0 || n == 0) return;
  if (k == 0) {
    CUDA_CHECK(cudaMemsetAsync(y.raw(), 0, y.numel() * sizeof(float), d.stream()));
    return;
  }
  const float one = 1.f, zero = 0.f;
  MatmulPlans& all = plans_of(d);
  const MatmulPlan& p = plan_for(d, all, m, n, k, ta, tb);
  if (p.found) {
    CUBLAS_CHECK(cublasLtMatmul(all.lt, p.op, &one, b.data<float>(), p.a, a.data<float>(), p.b, &zero,
                                y.data<float>(), p.c, y.data<float>(), p.c, &p.algo, d.cublas_workspace(),
                                p.workspace, d.stream()));
    return;
  }
  const int lda = static_cast<int>(a.dim(1)), ldb = static_cast<int>(b.dim(1));
  CUBLAS_CHECK(cublasSgemm(d.cublas(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                           static_cast<int>(m), static_cast<int>(k), &one, b.data<float>(), ldb, a.data<float>(), lda, &zero,
                           y.data<float>(), static_cast<int>(n)));
}

}  // namespace

void register_matmul_kernels(sdk::KernelTable& t) { add<OpId::MatMul, matmul>(t); }

}  // namespace axon::cuda
