"""The auto-pilot suites; a package so its conftest and helpers never shadow the others."""
