// make_process_env on Windows: GetEnvironmentStringsW in UTF-8, names case-insensitive.
#include <gtest/gtest.h>
#include <windows.h>

#include "platform/env.h"

namespace dlenv {
namespace {

TEST(EnvWin32, ProcessEnvIsASnapshotInUtf8) {
  ASSERT_TRUE(::SetEnvironmentVariableW(L"DLENV_ENV_TEST_VAR", L"a=b=c \u00e9\u4e2d"));
  auto env = make_process_env();
  EXPECT_EQ(env->get("DLENV_ENV_TEST_VAR"), "a=b=c \xc3\xa9\xe4\xb8\xad");
  ASSERT_TRUE(::SetEnvironmentVariableW(L"DLENV_ENV_TEST_VAR", L"changed"));
  EXPECT_EQ(env->get("DLENV_ENV_TEST_VAR"), "a=b=c \xc3\xa9\xe4\xb8\xad");
  EXPECT_EQ(env->all().at("DLENV_ENV_TEST_VAR"), "a=b=c \xc3\xa9\xe4\xb8\xad");
  ::SetEnvironmentVariableW(L"DLENV_ENV_TEST_VAR", nullptr);
  EXPECT_FALSE(make_process_env()->get("DLENV_ENV_TEST_VAR"));
}

TEST(EnvWin32, NamesAreCaseInsensitive) {
  ASSERT_TRUE(::SetEnvironmentVariableW(L"Dlenv_Mixed_Case", L"v"));
  auto env = make_process_env();
  EXPECT_EQ(env->get("DLENV_MIXED_CASE"), "v");
  EXPECT_EQ(env->get("dlenv_mixed_case"), "v");
  EXPECT_EQ(env->all().count("Dlenv_Mixed_Case"), 1u);  // spelled as the system has it
  ::SetEnvironmentVariableW(L"Dlenv_Mixed_Case", nullptr);
  // PATH is "Path" on Windows; either spelling finds it.
  EXPECT_TRUE(env->get("PATH"));
  EXPECT_EQ(env->get("PATH"), env->get("Path"));
}

}  // namespace
}  // namespace dlenv
