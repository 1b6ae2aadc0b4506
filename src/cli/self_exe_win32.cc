#include <windows.h>

#include <string>

#include "cli/self_exe.h"
#include "platform/win32_text.h"

namespace dlenv {

std::string self_executable() {
  std::wstring buf(32768, L'\0');
  const DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
  buf.resize(n);
  return win32::narrow(buf);
}

}  // namespace dlenv
