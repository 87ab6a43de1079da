"""Placeholder until this page is built."""
import streamlit as st

st.title("softmax")
st.info("This page is being built.")
