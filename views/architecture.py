"""Placeholder until this page is built."""
import streamlit as st

st.title("architecture")
st.info("This page is being built.")
