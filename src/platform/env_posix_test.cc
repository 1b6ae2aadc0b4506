// make_process_env on POSIX (environ); env_win32_test.cc is the Windows side.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "platform/env.h"

namespace dlenv {
namespace {

TEST(Env, ProcessEnvIsASnapshot) {
  ASSERT_EQ(::setenv("DLENV_ENV_TEST_VAR", "a=b=c", 1), 0);
  auto env = make_process_env();
  EXPECT_EQ(env->get("DLENV_ENV_TEST_VAR"), "a=b=c");
  ASSERT_EQ(::setenv("DLENV_ENV_TEST_VAR", "changed", 1), 0);
  EXPECT_EQ(env->get("DLENV_ENV_TEST_VAR"), "a=b=c");
  EXPECT_EQ(env->all().at("DLENV_ENV_TEST_VAR"), "a=b=c");
  ::unsetenv("DLENV_ENV_TEST_VAR");
  EXPECT_FALSE(make_process_env()->get("DLENV_ENV_TEST_VAR"));
}

}  // namespace
}  // namespace dlenv
