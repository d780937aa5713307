@echo off
rem pagent launcher for Windows: scripts/pagent's twin for a hook or command that Claude
rem Code starts without a POSIX shell (cmd.exe runs this file). It looks for pagent.exe in
rem the same order, and runs it with the arguments and stdin untouched:
rem
rem   1. %PAGENT_BIN%, when set and a file (tests, custom builds)
rem   2. <plugin root>\target\release\pagent.exe, then <plugin root>\target\debug\pagent.exe
rem      (a checkout used with `claude --plugin-dir`)
rem   3. %CLAUDE_PLUGIN_DATA%\bin\pagent.exe, then
rem      %CLAUDE_CONFIG_DIR% (default %USERPROFILE%\.claude)\plugins\data\pagent-pagent\bin\pagent.exe
rem
rem Unlike scripts/pagent it never searches PATH: cmd.exe looks in the current folder first,
rem which for a hook is the project, where a planted pagent.exe must never run. When
rem nothing is found it says so on stderr and exits 0, which allows the stop: a missing
rem binary never traps a session, and this file never exits 2 (that would block it).
setlocal
set "pagent_c=%PAGENT_BIN%"
if defined PAGENT_BIN if exist "%pagent_c%" goto run
set "pagent_c=%~dp0..\target\release\pagent.exe"
if exist "%pagent_c%" goto run
set "pagent_c=%~dp0..\target\debug\pagent.exe"
if exist "%pagent_c%" goto run
set "pagent_c=%CLAUDE_PLUGIN_DATA%\bin\pagent.exe"
if defined CLAUDE_PLUGIN_DATA if exist "%pagent_c%" goto run
set "pagent_c=%USERPROFILE%\.claude\plugins\data\pagent-pagent\bin\pagent.exe"
if defined CLAUDE_CONFIG_DIR set "pagent_c=%CLAUDE_CONFIG_DIR%\plugins\data\pagent-pagent\bin\pagent.exe"
if exist "%pagent_c%" goto run
echo pagent: the pagent binary is not installed (looked in PAGENT_BIN, %~dp0..\target and the plugin data folder); install it with npm (npm install -g pagent) or build it. Nothing was done. 1>&2
exit /b 0
:run
"%pagent_c%" %*
exit /b %ERRORLEVEL%

