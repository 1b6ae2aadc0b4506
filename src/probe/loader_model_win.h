// The Windows loader's DLL search, modelled as data (the counterpart of
// loader_model.h): for a DLL/EXE (or a DLL name) it resolves every import
// (and delay-load import) breadth-first the way LoadLibrary does, plus the
// companions NVIDIA DLLs load at run time, and records for each the file
// chosen, the rule that chose it, the copies it shadowed and the LoadLibrary
// error it would cause: 126 (not found), 193 (a DLL of another machine was
// found first: the Windows loader does not skip it), 127 (an imported
// function, by name or ordinal, or the target of a forwarder, is not exported
// by the chosen DLL), and mixed file versions within one family (cuDNN
// sub-DLLs, cuBLAS/cuBLASLt). Names compare case-insensitively. Paths are
// logical ("/Windows/System32" is C:\Windows\System32; under --root DIR, DIR
// is drive C:). KnownDLLs and API sets count as present even when the tree
// holds no System32 (a copied partial tree). Reads files only; never loads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kb/kb.h"
#include "platform/filesystem.h"
#include "probe/loader_model.h"
#include "util/result.h"

namespace dlenv {

// LoadLibraryEx flags the model understands (winbase.h / libloaderapi.h values).
inline constexpr uint32_t kLoadWithAlteredSearchPath = 0x00000008;
inline constexpr uint32_t kLoadLibrarySearchDllLoadDir = 0x00000100;
inline constexpr uint32_t kLoadLibrarySearchApplicationDir = 0x00000200;
inline constexpr uint32_t kLoadLibrarySearchUserDirs = 0x00000400;
inline constexpr uint32_t kLoadLibrarySearchSystem32 = 0x00000800;
inline constexpr uint32_t kLoadLibrarySearchDefaultDirs = 0x00001000;

struct WindowsLoaderSettings {
  std::string windows_dir = "/Windows";  // %SystemRoot%, logical
  // The directory of the process's .exe (e.g. the python.exe directory). Empty:
  // the root's directory when the root is an .exe, else not searched.
  std::string app_dir;
  std::string current_dir;             // empty: not searched
  std::vector<std::string> path;       // PATH entries, logical
  std::vector<std::string> user_dirs;  // AddDllDirectory / os.add_dll_directory
  std::string dll_directory;           // SetDllDirectory (empty: none)
  // The LoadLibraryEx flags of the root's load; LOAD_LIBRARY_SEARCH_* flags
  // apply to its dependencies too. 0: plain LoadLibrary (standard search order).
  uint32_t flags = 0;
  bool safe_dll_search = true;  // SafeDllSearchMode (on by default since XP SP2)
  // Set when the model explains a Python >= 3.8 extension-module / ctypes load
  // (flags DEFAULT_DIRS | DLL_LOAD_DIR): the wording of the fixes names
  // os.add_dll_directory.
  bool python_extension = false;
  // KnownDLLs names ("kernel32.dll"); empty: the built-in Windows 10/11 list.
  std::vector<std::string> known_dlls;
  // Module names or paths already loaded in the process before the root.
  std::vector<std::string> preloaded;
  // Extra directories to look in when explaining a missing DLL ("a copy exists
  // in X"): e.g. CUDA_PATH\bin. The directories of every resolved DLL, PATH and
  // the user directories are always looked in.
  std::vector<std::string> hint_dirs;
  // IMAGE_FILE_MACHINE_* of the process; 0: the root's machine (x64 for a name).
  uint16_t machine = 0;
  bool companions = true;     // add NVIDIA run-time companions
  bool check_imports = true;  // 127: imported functions exported by the chosen DLL
};

// The built-in KnownDLLs list (lower case).
const std::vector<std::string>& default_known_dlls();

// "C:\\Windows\\System32" / "c:/x" / "\\\\?\\C:\\x" -> "/Windows/System32", "/x";
// another drive "D:\\x" -> "/D:/x"; an already logical "/x" is kept.
std::string windows_logical_path(std::string_view windows_path);
// "/Windows/System32" -> "C:\\Windows\\System32" (for messages).
std::string windows_display_path(std::string_view logical);

// Resolves `file_or_name`: a path (with '/' or '\\') is the root object; a
// bare name is looked up as LoadLibraryEx(name, flags). Error only when the
// root itself cannot be read or is not a PE file.
Result<LoadTree> model_windows_load(const FileSystem& fs, const Kb& kb,
                                    const std::string& file_or_name,
                                    const WindowsLoaderSettings& settings);

}  // namespace dlenv
