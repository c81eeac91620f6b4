"""utils.devices: the device check's one-line errors and the machine a benchmark curve names."""

import platform

import pytest

from utils.devices import DeviceError, check_device, cpu_model, cpuinfo_field, describe_machine


def test_cpu_device_passes_and_a_bad_string_says_what_works():
    assert check_device("cpu") == "cpu"
    with pytest.raises(DeviceError, match="not a torch device; use cpu, cuda or cuda:N"):
        check_device("gpu0")


def test_cpu_model_is_read_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu\n")
    assert cpu_model(cpuinfo) == "AMD EPYC 9R14"


def test_cpu_model_without_cpuinfo_falls_back_to_platform(tmp_path):
    assert cpu_model(tmp_path / "missing") == (platform.processor() or None)


def test_describe_machine_names_architecture_cores_and_cpu(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("model name\t: Intel(R) Xeon(R) Platinum 8480+\n")
    text = describe_machine("cpu", cpuinfo)
    assert text.startswith(f"{platform.machine()} x ")
    assert text.endswith(" cores (Intel(R) Xeon(R) Platinum 8480+)")
    cpuinfo.write_text("processor\t: 0\n")  # no model line, as on some ARM kernels: the platform's name or none
    fallback = platform.processor()
    assert describe_machine("cpu", cpuinfo).endswith(f" cores ({fallback})" if fallback else " cores")


def test_cpuinfo_field_takes_the_first_matching_line_and_none_where_missing(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx512_bf16\nprocessor\t: 1\nflags\t\t: fpu\n")
    assert cpuinfo_field("flags", cpuinfo) == "fpu avx512_bf16"
    assert cpuinfo_field("model name", cpuinfo) is None
    assert cpuinfo_field("flags", tmp_path / "missing") is None
