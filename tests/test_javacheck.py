"""Without Java, bucketkit says so in one line instead of a Py4J stack trace."""

import subprocess
import sys


def test_missing_java_is_one_clear_line(tmp_path):
    env = {"PATH": str(tmp_path), "JAVA_HOME": str(tmp_path / "nowhere")}
    out = subprocess.run([sys.executable, "-m", "bucketkit.javacheck"], env=env, capture_output=True, text=True)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Java 17" in lines[0] and "no `java` was found" in lines[0]


def test_old_java_is_refused(tmp_path):
    fake = tmp_path / "java"
    fake.write_text('#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "bucketkit.javacheck"], env=env, capture_output=True, text=True)
    assert out.returncode == 1 and "version 11" in out.stderr


def test_present_java_passes():
    out = subprocess.run([sys.executable, "-m", "bucketkit.javacheck"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_java_without_javac_is_one_clear_line(tmp_path):
    fake = tmp_path / "java"
    fake.write_text('#!/bin/sh\necho \'openjdk version "17.0.15" 2025-04-15\' >&2\n')
    fake.chmod(0o755)
    env = {"PATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "bucketkit.javacheck"], env=env, capture_output=True, text=True)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 1 and len(lines) == 1 and "no `javac` was found" in lines[0], out.stderr
