#include <windows.h>

#include <algorithm>
#include <filesystem>

#include "platform/replace_file.h"
#include "platform/win32_text.h"

namespace dlenv {

Result<void> replace_file_atomically(const std::string& path, std::string_view data,
                                     uint32_t mode) {
  (void)mode;  // Windows: the directory's inherited ACL applies
  // '/' and '\\' both separate (std::filesystem on Windows).
  std::filesystem::path target(win32::widen(path));
  std::filesystem::path wtemp_path =
      target.parent_path() /
      (L"." + target.filename().wstring() + L".tmp." + std::to_wstring(GetCurrentProcessId()));
  std::wstring wtemp = wtemp_path.wstring();
  std::string temp = win32::narrow(wtemp);
  HANDLE h = CreateFileW(wtemp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    return fail(path + ": cannot create " + temp + ": " + win32::error_text(GetLastError()));
  }
  auto failed = [&](const char* what) -> Result<void> {
    DWORD err = GetLastError();
    if (h != INVALID_HANDLE_VALUE) CloseHandle(h);
    DeleteFileW(wtemp.c_str());
    return fail(path + ": " + what + ": " + win32::error_text(err));
  };
  size_t done = 0;
  while (done < data.size()) {
    DWORD chunk = static_cast<DWORD>(std::min<size_t>(data.size() - done, 1u << 30));
    DWORD written = 0;
    if (!WriteFile(h, data.data() + done, chunk, &written, nullptr)) return failed("write");
    done += written;
  }
  if (!FlushFileBuffers(h)) return failed("flush");
  CloseHandle(h);
  h = INVALID_HANDLE_VALUE;
  if (!MoveFileExW(wtemp.c_str(), win32::native_path(path).c_str(),
                   MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    return failed("rename");
  }
  return {};
}

}  // namespace dlenv
