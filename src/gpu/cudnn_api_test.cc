#include "gpu/cudnn_api.h"

#include <gtest/gtest.h>

namespace dlenv {
namespace {

TEST(CudnnApi, StatusNamesCoverCudnn8And9Codes) {
  EXPECT_STREQ(cudnn_status_name(0), "CUDNN_STATUS_SUCCESS");
  EXPECT_STREQ(cudnn_status_name(9), "CUDNN_STATUS_NOT_SUPPORTED");  // cuDNN 8
  EXPECT_STREQ(cudnn_status_name(3000), "CUDNN_STATUS_NOT_SUPPORTED");
  EXPECT_STREQ(cudnn_status_name(1008), "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED");
  EXPECT_STREQ(cudnn_status_name(3099), "CUDNN_STATUS_NOT_SUPPORTED");  // category fallback
  EXPECT_STREQ(cudnn_status_name(77), "CUDNN_STATUS_UNKNOWN");
  CudnnApi api;  // no library: the text is the name and the number
  EXPECT_EQ(api.status_text(2000), "CUDNN_STATUS_BAD_PARAM (2000)");
}

TEST(CudnnApi, SublibraryNames) {
  EXPECT_EQ(cudnn_sublibrary("cnn", 9, false), "libcudnn_cnn.so.9");
  EXPECT_EQ(cudnn_sublibrary("adv", 8, false), "libcudnn_adv_infer.so.8");
  EXPECT_EQ(cudnn_sublibrary("ops", 8, true), "cudnn_ops_infer64_8.dll");
  EXPECT_EQ(cudnn_sublibrary("adv", 9, true), "cudnn_adv64_9.dll");
}

TEST(CudnnApi, MissingLibraryIsAnErrorNamingIt) {
  auto r = load_cudnn("/nonexistent/dir", 9);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/nonexistent/dir/libcudnn.so.9"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace dlenv
