// The NVML floor: the least a program can do to report what `nvidia-smi --query-gpu=
// name,driver_version,compute_cap` reports — load libnvidia-ml.so.1, nvmlInit_v2, the
// driver version, per GPU its name, UUID, compute capability and memory, nvmlShutdown.
// `dlenv doctor --json` is timed against it (bench/doctor_vs_nvidia_smi.sh).
// Build: cc -O2 -o nvml_floor bench/nvml_floor.c -ldl   (no NVML headers needed)
#include <dlfcn.h>
#include <stdio.h>

typedef int (*init_fn)(void);
typedef int (*count_fn)(unsigned*);
typedef int (*handle_fn)(unsigned, void**);
typedef int (*str_fn)(void*, char*, unsigned);
typedef int (*sys_str_fn)(char*, unsigned);
typedef int (*cc_fn)(void*, int*, int*);
typedef struct {
  unsigned long long total, free, used;
} mem_info;
typedef int (*mem_fn)(void*, mem_info*);

static void* sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) fprintf(stderr, "nvml_floor: %s missing\n", name);
  return p;
}

int main(void) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "nvml_floor: %s\n", dlerror());
    return 2;
  }
  init_fn init = (init_fn)sym(lib, "nvmlInit_v2");
  init_fn shutdown = (init_fn)sym(lib, "nvmlShutdown");
  sys_str_fn driver = (sys_str_fn)sym(lib, "nvmlSystemGetDriverVersion");
  count_fn count = (count_fn)sym(lib, "nvmlDeviceGetCount_v2");
  handle_fn handle = (handle_fn)sym(lib, "nvmlDeviceGetHandleByIndex_v2");
  str_fn name = (str_fn)sym(lib, "nvmlDeviceGetName");
  str_fn uuid = (str_fn)sym(lib, "nvmlDeviceGetUUID");
  cc_fn cc = (cc_fn)sym(lib, "nvmlDeviceGetCudaComputeCapability");
  mem_fn mem = (mem_fn)sym(lib, "nvmlDeviceGetMemoryInfo");
  if (!init || !shutdown || !driver || !count || !handle || !name || !uuid || !cc || !mem) return 2;
  if (init() != 0) return 3;
  char buf[96];
  if (driver(buf, sizeof buf) == 0) printf("driver %s\n", buf);
  unsigned n = 0;
  if (count(&n) != 0) n = 0;
  for (unsigned i = 0; i < n; ++i) {
    void* dev = 0;
    if (handle(i, &dev) != 0) continue;
    char nm[96], id[96];
    int major = 0, minor = 0;
    mem_info m = {0, 0, 0};
    if (name(dev, nm, sizeof nm) != 0) nm[0] = 0;
    if (uuid(dev, id, sizeof id) != 0) id[0] = 0;
    cc(dev, &major, &minor);
    mem(dev, &m);
    printf("%u %s %s %d.%d %llu MiB\n", i, nm, id, major, minor, m.total >> 20);
  }
  shutdown();
  return 0;
}
