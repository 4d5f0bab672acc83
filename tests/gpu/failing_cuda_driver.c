// failing_cuda_driver.c - a libcuda.so.1 every call of which fails with CUDA_ERROR_UNKNOWN: a
// GPU machine whose CUDA is broken, on any machine (cuda_failure_test.sh).
//
// CUDA's runtime loads the driver by that name and finds every entry point
// through cuGetProcAddress, after asking the driver's version. Those two
// answer as a CUDA 13 driver would, so that the runtime goes on to call the
// driver; every other entry point fails. cudaGetDeviceCount then answers
// cudaErrorUnknown: an error, not "no device", which the tests that need a GPU
// must report as a failure.
#include <string.h>

enum { cuda_success = 0, cuda_error_unknown = 999, driver_version = 13000 };

static int fails(void) { return cuda_error_unknown; }

static int answer_version(int* version) {
  *version = driver_version;
  return cuda_success;
}

int cuGetProcAddress_v2(const char* symbol, void** function, int cuda_version,
                        unsigned long long flags, int* status) {
  (void)cuda_version;
  (void)flags;
  if (status)
    *status = 0; // CU_GET_PROC_ADDRESS_SUCCESS
  if (strcmp(symbol, "cuDriverGetVersion") == 0)
    *function = (void*)answer_version;
  else if (strcmp(symbol, "cuGetProcAddress") == 0)
    *function = (void*)cuGetProcAddress_v2;
  else
    *function = (void*)fails;
  return cuda_success;
}

int cuGetProcAddress(const char* symbol, void** function, int cuda_version,
                     unsigned long long flags) {
  return cuGetProcAddress_v2(symbol, function, cuda_version, flags, 0);
}

int cuDriverGetVersion(int* version) { return answer_version(version); }

int cuInit(unsigned int flags) {
  (void)flags;
  return fails();
}
