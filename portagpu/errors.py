"""Exceptions portagpu raises on purpose. The CLI prints these as one line, exit 2."""

from __future__ import annotations


class PortagpuError(Exception):
    """Base class: an error with a message meant for the user, not a traceback."""


class DeviceNotFoundError(PortagpuError):
    """The backend asked for (PORTAGPU_DEVICE or an argument) is not present."""


class ConfigError(PortagpuError):
    """Bad configuration: an unknown option, value or rule code."""


class LaunchError(PortagpuError):
    """A kernel launch was refused before it reached the device."""


class VisibilityError(PortagpuError):
    """Visible-device variables that conflict, or a restriction that cannot hold."""


class DistributedError(PortagpuError):
    """torch.distributed cannot start as asked on this machine or launch."""
